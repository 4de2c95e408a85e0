import ArgumentParser
import CoreData

/// How `query` prints its rows.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, json, csv
}

/// Turning attribute and relationship values into text and JSON.
enum Values {
    /// The ISO 8601 form of dates, with fractional seconds.
    nonisolated(unsafe) static let dates: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    /// A value as one cell of text: relationships as object-ID URIs (to-manys separated by spaces),
    /// dates in ISO 8601, data in base64, nil as the empty string.
    static func text(_ value: Any?) -> String {
        switch json(value) {
        case is NSNull: return ""
        case let array as [Any]: return array.map { text($0) }.joined(separator: " ")
        case let string as String: return string
        case let bool as Bool: return bool ? "true" : "false"
        case let other: return "\(other)"
        }
    }

    /// A value in a JSON-compatible form.
    static func json(_ value: Any?) -> Any {
        guard let value, !(value is NSNull) else { return NSNull() }
        switch value {
        case let string as String: return string
        case let bool as Bool: return bool
        case let int as Int: return int
        case let double as Double: return double.isFinite ? double : "\(double)"
        case let float as Float: return float.isFinite ? Double(float) : "\(float)"
        case let decimal as Decimal: return decimal.description
        case let date as Date: return dates.string(from: date)
        case let data as Data: return data.base64EncodedString()
        case let uuid as UUID: return uuid.uuidString
        case let url as URL: return url.absoluteString
        case let id as NSManagedObjectID: return id.uriRepresentation().absoluteString
        case let object as NSManagedObject: return object.objectID.uriRepresentation().absoluteString
        case let set as NSOrderedSet: return set.array.map(json)
        case let set as NSSet: return set.allObjects.map(json).sorted { "\($0)" < "\($1)" }
        case let set as Set<NSManagedObject>: return set.map(json).sorted { "\($0)" < "\($1)" }
        case let array as [Any]: return array.map(json)
        case let number as NSNumber: return number
        default: return "\(value)"
        }
    }
}

/// Rows printed as an aligned table, JSON or CSV.
enum RowPrinter {
    static func print(_ rows: [[String: Any]], columns: [String], format: OutputFormat) throws {
        switch format {
        case .json:
            let objects = rows.map { row in
                Dictionary(uniqueKeysWithValues: columns.map { ($0, Values.json(row[$0])) })
            }
            let data = try JSONSerialization.data(
                withJSONObject: objects, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
            Swift.print(String(decoding: data, as: UTF8.self))
        case .csv:
            Swift.print(columns.map(csvField).joined(separator: ","))
            for row in rows {
                Swift.print(columns.map { csvField(Values.text(row[$0])) }.joined(separator: ","))
            }
        case .table:
            let cells = rows.map { row in columns.map { cell(Values.text(row[$0])) } }
            var widths = columns.map(\.count)
            for line in cells {
                for (index, cell) in line.enumerated() { widths[index] = max(widths[index], cell.count) }
            }
            func line(_ values: [String]) -> String {
                zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                    .joined(separator: "  ").trimmingCharacters(in: .whitespaces)
            }
            Swift.print(line(columns))
            Swift.print(line(widths.map { String(repeating: "-", count: $0) }))
            for values in cells { Swift.print(line(values)) }
            Swift.print("(\(rows.count) \(rows.count == 1 ? "row" : "rows"))")
        }
    }

    /// A table cell: one line, at most 60 characters — object-ID URIs whole, since they name objects.
    private static func cell(_ text: String) -> String {
        let flat = text.replacingOccurrences(of: "\n", with: "⏎")
        guard flat.count > 60, !flat.hasPrefix("x-coredata://") else { return flat }
        return String(flat.prefix(59)) + "…"
    }

    /// A CSV field, quoted when it holds a comma, a quote or a line break (RFC 4180).
    static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
