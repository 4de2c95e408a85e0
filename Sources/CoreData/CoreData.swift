@_exported import OpenCoreData
