import CoreDataToolKit

// `coredata`: SQLite, XML and binary stores; it links no PostgreSQL driver (`coredata-postgres` does).
CommandLineTool.main()
