import CoreData
import CoreDataToolKit
@_spi(Tools) import OpenCoreDataPostgres

// `coredata-postgres`: the `coredata` tool with the PostgreSQL store, for `postgres://` URLs.
CommandLineTool.main(
    postgreSQL: PostgreSQLSupport(
        cachedModel: { try NSManagedObjectModel(contentsOfPostgreSQLStoreAt: $0) },
        check: { try PostgreSQLStoreCheck.findings(storeAt: $0, model: $1, compareVersionHashes: $2) }))
