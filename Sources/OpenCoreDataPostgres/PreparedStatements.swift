import NIOCore
import OpenCoreDataSQL
import PostgresNIO

/// The statements one connection has prepared on the server (PostgreSQL's named statements), so
/// a statement the store runs again and again — a lookup, a to-many's members, a fault's row —
/// is parsed and planned once rather than at every run, as an unnamed statement is.
///
/// A statement is prepared the second time its text is run, once its first run succeeded: a
/// statement run once (a fetch with a long list of keys) would pay a round trip to prepare and
/// keep server memory for nothing, and one that fails unprepared stays unprepared, failing the
/// same way.
/// The driver prepares a statement without parameter types, so the server infers each from the
/// text, and it sends every value in binary form; the text is therefore prepared with each
/// parameter cast to the type it is bound as (`$1::int8`, `$2::text`), which is what an unnamed
/// statement's bound types tell the server. An unnamed statement sends text untyped, for the
/// server to read as what it meets (a `NUMERIC` column, a `BIGINT`): such a statement does not
/// prepare as text (no operator compares the two) and is left unnamed, as it was. The types are
/// part of the text, so the same statement bound with other types is another prepared statement.
struct PreparedStatements {
    /// The prepared statements by their typed text.
    private var prepared: [String: PreparedQuery] = [:]
    /// Typed texts run once, successfully, and not yet prepared.
    private var seenOnce: Set<String> = []
    /// Typed texts the server would not prepare (text compared with a number).
    private var refused: Set<String> = []
    /// Turned off when the server forgot a prepared statement (a pooler between the store and
    /// the server that does not keep a client's statements): from then on the connection runs
    /// unnamed statements only.
    private(set) var isEnabled = true

    /// At most this many prepared statements a connection; at most this many texts remembered.
    private static let capacity = 256

    /// What to do with `sql` bound to `values`: run it prepared (an earlier run prepared it, or
    /// it is run for the second time and is to be prepared now), or run it unnamed — for the
    /// first time, when `firstRun` is its typed text, to be told to ``ranOnce(_:)`` if it succeeds.
    enum Plan {
        case run(PreparedQuery, typedText: String)
        case prepare(typedText: String)
        case unnamed(firstRun: String?)
    }

    func plan(_ sql: String, _ values: [SQLValue]) -> Plan {
        guard isEnabled, let text = Self.typedText(sql, values) else { return .unnamed(firstRun: nil) }
        if let statement = prepared[text] { return .run(statement, typedText: text) }
        if refused.contains(text) { return .unnamed(firstRun: nil) }
        if seenOnce.contains(text) { return .prepare(typedText: text) }
        return .unnamed(firstRun: text)
    }

    /// Remembers that the statement of typed text `text` ran, and succeeded, unprepared.
    mutating func ranOnce(_ text: String) {
        if seenOnce.count >= Self.capacity { seenOnce.removeAll(keepingCapacity: true) }
        seenOnce.insert(text)
    }

    /// Keeps `statement`, prepared from `text`; answers a statement let go of to make room, for
    /// the caller to close on the server.
    mutating func keep(_ statement: PreparedQuery, for text: String) -> PreparedQuery? {
        var evicted: PreparedQuery?
        if prepared.count >= Self.capacity, let victim = prepared.first {
            prepared.removeValue(forKey: victim.key)
            evicted = victim.value
        }
        prepared[text] = statement
        seenOnce.remove(text)
        return evicted
    }

    /// Remembers that the server would not prepare `text`.
    mutating func refuse(_ text: String) {
        if refused.count >= Self.capacity { refused.removeAll(keepingCapacity: true) }
        refused.insert(text)
        seenOnce.remove(text)
    }

    /// Forgets the statement prepared from `text` (its plan no longer fits the tables).
    mutating func forget(_ text: String) -> PreparedQuery? { prepared.removeValue(forKey: text) }

    /// Forgets every statement and prepares no more.
    mutating func disable() {
        isEnabled = false
        prepared.removeAll()
        seenOnce.removeAll()
    }

    /// `sql` with each `$n` outside quotes that is bound to a value followed by a cast to the type
    /// it is bound as (`NULL` is left for the server to infer); `nil` when it has no parameters
    /// (nothing to infer wrongly, but nothing worth preparing either: the transaction statements)
    /// or is not a statement that can be prepared.
    static func typedText(_ sql: String, _ values: [SQLValue]) -> String? {
        guard !values.isEmpty, sql.hasPrefix("SELECT ") || sql.hasPrefix("WITH ") else { return nil }
        let utf8 = Array(sql.utf8)
        var result: [UInt8] = []
        result.reserveCapacity(utf8.count + values.count * 7)
        var quote: UInt8?
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            result.append(byte)
            index += 1
            if let open = quote {
                if byte == open { quote = nil }  // a doubled quote closes and opens again
                continue
            }
            switch byte {
            case UInt8(ascii: "'"), UInt8(ascii: "\""): quote = byte
            case UInt8(ascii: "$"):
                var number = 0
                var digits = 0
                while index < utf8.count, utf8[index] >= UInt8(ascii: "0"), utf8[index] <= UInt8(ascii: "9") {
                    number = number * 10 + Int(utf8[index] - UInt8(ascii: "0"))
                    result.append(utf8[index])
                    index += 1
                    digits += 1
                }
                guard digits > 0 else { continue }
                guard number >= 1, number <= values.count else { return nil }
                switch values[number - 1] {
                case .integer: result.append(contentsOf: "::int8".utf8)
                case .real: result.append(contentsOf: "::float8".utf8)
                case .blob: result.append(contentsOf: "::bytea".utf8)
                case .text: result.append(contentsOf: "::text".utf8)
                case .null: break
                }
            default: break
            }
        }
        return quote == nil ? String(decoding: result, as: UTF8.self) : nil
    }

    /// `values` as the driver's bound values for a prepared statement, each in the binary form of
    /// the type ``typedText(_:_:)`` cast it to (text's is its UTF-8), `NULL` as no value.
    static func bindings(_ values: [SQLValue]) -> [PostgresData] {
        values.map { value in
            switch value {
            case .null:
                return PostgresData(type: .null, formatCode: .binary, value: nil)
            case .integer(let integer):
                var buffer = ByteBuffer()
                buffer.writeInteger(integer)
                return PostgresData(type: .int8, formatCode: .binary, value: buffer)
            case .real(let real):
                var buffer = ByteBuffer()
                buffer.writeInteger(real.bitPattern)
                return PostgresData(type: .float8, formatCode: .binary, value: buffer)
            case .text(let text):
                return PostgresData(type: .text, formatCode: .binary, value: ByteBuffer(string: text))
            case .blob(let bytes):
                return PostgresData(type: .bytea, formatCode: .binary, value: ByteBuffer(bytes: bytes))
            }
        }
    }
}
