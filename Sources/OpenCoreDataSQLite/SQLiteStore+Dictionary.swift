import OpenCoreData
import OpenCoreDataSQL

extension SQLiteStore {
    /// Runs a dictionary-result fetch planned in SQL; nil values leave their key out, as Apple's do.
    func fetchDictionaries(
        _ plan: SQLQuery.DictionaryPlan, request: NSFetchRequest<NSFetchRequestResult>
    ) throws -> [Any] {
        let statement = try connection.statement(plan.statement.sql)
        try statement.bind(plan.statement.parameters)
        var rows: [[String: Any]] = []
        while try statement.step() {
            var row: [String: Any] = [:]
            var index: Int32 = 0
            for column in plan.columns {
                switch column.reader {
                case .value(let type, let attribute):
                    row[column.name] = SQLiteValues.value(statement, index, type: type, attribute: attribute)
                    index += 1
                case .object(let hasEntityColumn, let destination):
                    if !statement.isNull(at: index) {
                        var entity = destination
                        if hasEntityColumn, let exact = schema.entitiesByNumber[statement.int64(at: index + 1)] {
                            entity = exact.entity
                        }
                        row[column.name] = objectID(entity, statement.int64(at: index))
                    }
                    index += hasEntityColumn ? 2 : 1
                }
            }
            rows.append(row)
        }
        statement.reset()
        return plan.finish(rows, request: request)
    }
}
