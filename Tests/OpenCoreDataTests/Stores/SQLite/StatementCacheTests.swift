import Foundation
import Testing

@testable import OpenCoreDataSQLite

/// A connection prepares each statement once and reuses it (the rule of the store's SQL layer,
/// ARCHITECTURE.md, "Values and snapshots"; SQLite's `sqlite3_prepare_v3` with
/// `SQLITE_PREPARE_PERSISTENT`, "The prepared statement will be retained for a long time and
/// probably reused many times"). Issue 21 finds the statements asked for lately by the string
/// they were asked with, before hashing the text: equal text in another string, and statements
/// asked for in turn past the few kept at hand, must still be the ones prepared, with their
/// bindings and results.
@Suite("SQLite store: prepared statements reused by their text")
struct StatementCacheTests {
    @Test("equal text held in another string finds the statement prepared for it")
    func equalTextInAnotherString() throws {
        let connection = try SQLiteConnection(path: SQLiteConnection.memoryPath, mode: .readWrite(create: true))
        try connection.execute("CREATE TABLE t (x INTEGER)")
        let text = "INSERT INTO t (x) VALUES (?)"
        let first = try connection.statement(text)
        // The same characters, in storage of their own.
        let copy = String(decoding: Array(text.utf8), as: UTF8.self)
        let again = try connection.statement(copy)
        #expect(again === first)
        again.bind(int64: 7, at: 1)
        #expect(try again.step() == false)
        #expect(try connection.integer("SELECT x FROM t WHERE x = ?", 7) == 7)
    }

    @Test("statements asked for in turn, more than are kept at hand, each answer their own query")
    func manyStatementsInTurn() throws {
        let connection = try SQLiteConnection(path: SQLiteConnection.memoryPath, mode: .readWrite(create: true))
        // Twenty statements that differ in how many parameters they add up: the first `? `, the
        // second `? + ?`, and so on (values are only ever bound).
        let texts = (1...20).map { count in "SELECT " + Array(repeating: "?", count: count).joined(separator: " + ") }
        var prepared: [ObjectIdentifier] = []
        for round in 0..<3 {
            for (index, text) in texts.enumerated() {
                // The first round with the texts themselves, later ones with copies.
                let asked = round == 0 ? text : String(decoding: Array(text.utf8), as: UTF8.self)
                let statement = try connection.statement(asked)
                if round == 0 {
                    prepared.append(ObjectIdentifier(statement))
                } else {
                    #expect(ObjectIdentifier(statement) == prepared[index], "\(text) prepared once")
                }
                for parameter in 1...(index + 1) { statement.bind(int64: Int64(round + 1), at: Int32(parameter)) }
                #expect(try statement.step())
                #expect(statement.int64(at: 0) == Int64((index + 1) * (round + 1)))
            }
        }
        #expect(try connection.integer("SELECT 'text' WHERE ? = 0", 0) == nil, "a text value is not an integer")
    }
}
