import CoreData

/// The JSON document `coredata export` writes and `coredata import` reads.
///
/// ```json
/// {
///   "format" : "coredata-export",
///   "version" : 1,
///   "entities" : {
///     "Department" : [ { "@id" : "Department/1", "name" : "Research", "employees" : [ "Employee/1" ] } ],
///     "Employee" : [ { "@id" : "Employee/1", "name" : "Ada", "department" : "Department/1" } ]
///   }
/// }
/// ```
///
/// Each entity lists the objects of exactly that entity (sub-entities under their own name), in
/// primary-key order. `@id` is `<Entity>/<n>`, the object's position in its list, so a file does
/// not depend on the keys of the store it came from. Every stored attribute and relationship
/// appears, nil as `null`. Values by attribute type: integers and Booleans as JSON integers and
/// Booleans; Double and Float as numbers (`"nan"`, `"inf"`, `"-inf"` as strings); Decimal as a
/// string; Date as seconds since 2001-01-01 00:00:00 UTC (Core Data's reference date, exact);
/// Binary Data as base64; UUID and URI as strings; Transformable as base64 of the transformed data.
/// To-one relationships are an `@id` or `null`; to-many relationships an array of `@id`s, in the
/// relationship's order when it is ordered and sorted otherwise.
enum ExportFormat {
    static let name = "coredata-export"
    static let version = 1

    /// The attributes and relationships of `entity` that a file carries, by name.
    static func properties(of entity: NSEntityDescription) -> [NSPropertyDescription] {
        entity.properties.filter { property in
            switch property {
            case is NSDerivedAttributeDescription: return false
            case let attribute as NSAttributeDescription: return !attribute.isTransient
            case let relationship as NSRelationshipDescription: return !relationship.isTransient
            default: return false
            }
        }.sorted { $0.name < $1.name }
    }

    /// An attribute value in the file's form.
    static func encode(_ value: Any?, _ attribute: NSAttributeDescription) -> Any {
        guard let value, !(value is NSNull) else { return NSNull() }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            if let int = value as? Int { return int }
            return (value as? NSNumber)?.intValue ?? NSNull()
        case .booleanAttributeType:
            return (value as? Bool) ?? (value as? NSNumber)?.boolValue ?? NSNull()
        case .doubleAttributeType, .floatAttributeType:
            let double = (value as? Double) ?? (value as? Float).map(Double.init) ?? (value as? NSNumber)?.doubleValue
            guard let double else { return NSNull() }
            if double.isNaN { return "nan" }
            if double.isInfinite { return double > 0 ? "inf" : "-inf" }
            return double
        case .decimalAttributeType:
            return (value as? Decimal)?.description ?? "\(value)"
        case .dateAttributeType:
            return (value as? Date)?.timeIntervalSinceReferenceDate ?? NSNull()
        case .binaryDataAttributeType:
            return (value as? Data)?.base64EncodedString() ?? NSNull()
        case .UUIDAttributeType:
            return (value as? UUID)?.uuidString ?? NSNull()
        case .URIAttributeType:
            return (value as? URL)?.absoluteString ?? NSNull()
        case .transformableAttributeType:
            let data = Transformable.encode(value, attribute: attribute)
            return data?.base64EncodedString() ?? NSNull()
        default:
            return "\(value)"
        }
    }

    /// A value from the file as the attribute's value; `nil` for `null`. Throws a description of
    /// what was expected when the JSON value has the wrong kind.
    static func decode(_ json: Any, _ attribute: NSAttributeDescription) throws -> Any? {
        if json is NSNull { return nil }
        func expected(_ kind: String) -> any Error {
            ImportProblem("expected \(kind), found \(describe(json))")
        }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let number = json as? NSNumber, !isBoolean(json), number.doubleValue == number.doubleValue.rounded()
            else { throw expected("an integer") }
            return number.intValue
        case .booleanAttributeType:
            guard isBoolean(json), let bool = json as? Bool else { throw expected("true or false") }
            return bool
        case .doubleAttributeType, .floatAttributeType:
            var double: Double
            switch json {
            case "nan" as String: double = .nan
            case "inf" as String: double = .infinity
            case "-inf" as String: double = -.infinity
            case let number as NSNumber where !isBoolean(json): double = number.doubleValue
            default: throw expected("a number")
            }
            if attribute.attributeType == .floatAttributeType { return Float(double) }
            return double
        case .decimalAttributeType:
            guard let string = json as? String, let decimal = Decimal(string: string) else {
                throw expected("a decimal number as a string")
            }
            return decimal
        case .stringAttributeType:
            guard let string = json as? String else { throw expected("a string") }
            return string
        case .dateAttributeType:
            guard let number = json as? NSNumber, !isBoolean(json) else { throw expected("seconds since 2001-01-01") }
            return Date(timeIntervalSinceReferenceDate: number.doubleValue)
        case .binaryDataAttributeType:
            guard let string = json as? String, let data = Data(base64Encoded: string) else {
                throw expected("base64 data")
            }
            return data
        case .UUIDAttributeType:
            guard let string = json as? String, let uuid = UUID(uuidString: string) else { throw expected("a UUID") }
            return uuid
        case .URIAttributeType:
            guard let string = json as? String, let url = URL(string: string) else { throw expected("a URI") }
            return url
        case .transformableAttributeType:
            guard let string = json as? String, let data = Data(base64Encoded: string) else {
                throw expected("base64 data")
            }
            // The bytes are the stored form: the attribute's transformer gives the value back,
            // which the store transforms again as it saves.
            return Transformable.decode(data, attribute: attribute) ?? data
        default:
            throw ImportProblem("attributes of this type cannot be imported")
        }
    }

    /// Whether a parsed JSON value is `true` or `false`. Not `is Bool`: on Linux every `NSNumber`
    /// holding 0 or 1 casts to `Bool`; a Boolean's number has the Objective-C type `c`.
    static func isBoolean(_ json: Any) -> Bool {
        guard let number = json as? NSNumber else { return false }
        return String(cString: number.objCType) == "c"
    }

    static func describe(_ json: Any) -> String {
        if isBoolean(json) { return "a Boolean" }
        switch json {
        case is NSNull: return "null"
        case is String: return "a string"
        case is NSNumber: return "a number"
        case is [Any]: return "an array"
        case is [String: Any]: return "an object"
        default: return "\(type(of: json))"
        }
    }
}

/// What is wrong with one value of an import file.
struct ImportProblem: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// A progress bar on standard error, for work that takes more than a second, only when standard
/// error is a terminal.
final class ProgressBar {
    private let label: String
    private let total: Int
    private let start = ContinuousClock.now
    private var shown = false
    private var lastPercent = -1

    init(_ label: String, total: Int) {
        self.label = label
        self.total = max(total, 1)
    }

    func update(_ done: Int) {
        guard Terminal.standardErrorIsTerminal, ContinuousClock.now - start > .seconds(1) else { return }
        let percent = done * 100 / total
        guard percent != lastPercent else { return }
        lastPercent = percent
        shown = true
        let filled = percent * 30 / 100
        let bar = String(repeating: "#", count: filled) + String(repeating: " ", count: 30 - filled)
        FileHandle.standardError.write(Data("\r\(label) [\(bar)] \(percent)%".utf8))
    }

    func finish() {
        if shown { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
    }
}
