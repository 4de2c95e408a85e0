/// The result of a request a context executes with ``NSManagedObjectContext/execute(_:)``.
open class NSPersistentStoreResult: NSObject {}
