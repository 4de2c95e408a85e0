/// A model, a coordinator, its stores and a main-queue context, set up together.
///
/// ```swift
/// let container = NSPersistentContainer(name: "Company", managedObjectModel: model)
/// container.persistentStoreDescriptions.first?.type = NSInMemoryStoreType
/// container.loadPersistentStores { _, error in
///     if let error { fatalError("\(error)") }
/// }
/// let context = container.viewContext
/// ```
open class NSPersistentContainer: NSObject, @unchecked Sendable {
    /// The container's name; also the default store's file name.
    public let name: String
    /// The model of the container's stores.
    public let managedObjectModel: NSManagedObjectModel
    /// The coordinator of the container's stores.
    public let persistentStoreCoordinator: NSPersistentStoreCoordinator
    /// The stores `loadPersistentStores` adds; by default one SQLite store named after the container
    /// in ``defaultDirectoryURL()``.
    open var persistentStoreDescriptions: [NSPersistentStoreDescription]
    private var mainContext: NSManagedObjectContext?
    private let lock = NSLock()

    /// Creates a container whose model is the compiled or source model named `name`, found next
    /// to the program: in `Bundle.main`'s resources, in the resource bundles of the program's
    /// SwiftPM targets, or in the current directory.
    ///
    /// Traps when no such model exists, as Apple's container logs and fails.
    public convenience init(name: String) {
        guard let model = Self.findModel(named: name) else {
            preconditionFailure("NSPersistentContainer(name:): no model named \(name) (.momd, .mom, .xcdatamodeld)")
        }
        self.init(name: name, managedObjectModel: model)
    }

    /// Creates a container with `model`.
    public init(name: String, managedObjectModel model: NSManagedObjectModel) {
        self.name = name
        managedObjectModel = model
        persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        let description = NSPersistentStoreDescription(
            url: Self.defaultDirectoryURL().appendingPathComponent("\(name).sqlite"))
        persistentStoreDescriptions = [description]
        super.init()
    }

    /// The directory default stores live in: `$XDG_DATA_HOME` or `~/.local/share` on Linux (Apple
    /// uses Application Support).
    open class func defaultDirectoryURL() -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], !data.isEmpty { return URL(fileURLWithPath: data) }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
    }

    /// The main-queue context, connected to the coordinator.
    open var viewContext: NSManagedObjectContext {
        lock.lock()
        defer { lock.unlock() }
        if let mainContext { return mainContext }
        let context = NSManagedObjectContext(concurrencyType: .mainQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        mainContext = context
        return context
    }

    /// Adds every described store, calling `block` once per store with the error, if any.
    open func loadPersistentStores(
        completionHandler block: @escaping (NSPersistentStoreDescription, (any Error)?) -> Void
    ) {
        for description in persistentStoreDescriptions {
            persistentStoreCoordinator.addPersistentStore(with: description, completionHandler: block)
        }
    }

    /// A new private-queue context connected to the coordinator.
    open func newBackgroundContext() -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .privateQueueConcurrencyType)
        context.persistentStoreCoordinator = persistentStoreCoordinator
        return context
    }

    /// Runs `block` on a new private-queue context.
    open func performBackgroundTask(_ block: @escaping (NSManagedObjectContext) -> Void) {
        let context = newBackgroundContext()
        context.perform { block(context) }
    }

    /// Runs `block` on a new private-queue context and returns its value (or rethrows its error)
    /// when it is done.
    ///
    /// > Note: Differs from Apple Core Data: declared with typed throws rather than `rethrows`,
    /// > with the same effect for callers (a non-throwing block needs no `try`).
    public func performBackgroundTask<T, E: Error>(
        _ block: @escaping (NSManagedObjectContext) throws(E) -> T
    ) async throws(E) -> T {
        let context = newBackgroundContext()
        return try await context.perform(schedule: .enqueued) { () throws(E) -> T in try block(context) }
    }

    private static func findModel(named name: String) -> NSManagedObjectModel? {
        var directories: [URL] = []
        if let resources = Bundle.main.resourceURL { directories.append(resources) }
        directories.append(Bundle.main.bundleURL)
        // The resource bundles SwiftPM builds beside a program, one per target with resources
        // (`<package>_<target>.resources` on Linux, `.bundle` on Apple platforms): a model file
        // a target declares as a resource is found by name, as an app's is in its main bundle.
        let beside =
            (try? FileManager.default.contentsOfDirectory(at: Bundle.main.bundleURL, includingPropertiesForKeys: nil))
            ?? []
        directories += beside.filter { ["resources", "bundle"].contains($0.pathExtension) }.sorted { $0.path < $1.path }
        directories.append(URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        for directory in directories {
            for suffix in ["momd", "mom", "xcdatamodeld", "xcdatamodel"] {
                let url = directory.appendingPathComponent("\(name).\(suffix)")
                if FileManager.default.fileExists(atPath: url.path), let model = NSManagedObjectModel(contentsOf: url) {
                    return model
                }
            }
        }
        return nil
    }
}
