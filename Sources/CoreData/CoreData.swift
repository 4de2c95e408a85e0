@_exported import OpenCoreData
@_exported import OpenCoreDataSQLite
