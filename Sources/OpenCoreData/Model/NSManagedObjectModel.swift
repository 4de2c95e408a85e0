import Synchronization

/// A managed object model: the entities of an application's object graph, their configurations
/// and version identifiers.
///
/// Build one in code, or load an Xcode model with ``init(contentsOf:)`` (an `.xcdatamodeld`
/// folder or one `.xcdatamodel`).
open class NSManagedObjectModel: NSObject, @unchecked Sendable {
    private var entityList: [NSEntityDescription] = []
    private var configurationMembers: [String: [NSEntityDescription]] = [:]
    private var configurationOrder: [String] = []

    /// False once a persistent store coordinator uses the model; Apple's models are immutable from
    /// then on, and editing traps. Atomic: coordinators made at once on several threads (each
    /// sets it) share one model.
    var isEditable: Bool {
        get { editable.load(ordering: .acquiring) }
        set { editable.store(newValue, ordering: .releasing) }
    }
    private let editable = Atomic<Bool>(true)
    /// The UUID of the store whose `Z_MODELCACHE` this model was decoded from, if any.
    package var cachedFromStoreUUID: String?

    private var templates: [String: NSFetchRequest<NSFetchRequestResult>] = [:]

    /// The version identifiers of the model (Xcode's "Model Version Identifier").
    open var versionIdentifiers: Set<AnyHashable> = []

    /// Creates an empty model.
    override public init() {
        super.init()
    }

    /// The entities of the model. Setting them makes this model their owner.
    open var entities: [NSEntityDescription] {
        get { entityList }
        set {
            precondition(isEditable, "NSManagedObjectModel.entities: can't modify an immutable model")
            for entity in entityList where entity.managedObjectModel === self { entity.managedObjectModel = nil }
            entityList = newValue
            for entity in newValue { entity.managedObjectModel = self }
        }
    }

    /// The entities keyed by name.
    ///
    /// Built once the model is immutable (a coordinator uses it), as the entity layouts are:
    /// `insertNewObject(forEntityName:into:)` looks the name up for every object it makes, and
    /// building the dictionary each time was a twelfth of inserting one.
    open var entitiesByName: [String: NSEntityDescription] {
        guard !isEditable else { return Self.index(entityList) }
        frozenIndexLock.lock()
        defer { frozenIndexLock.unlock() }
        if let frozenIndex { return frozenIndex }
        let built = Self.index(entityList)
        frozenIndex = built
        return built
    }
    /// ``entitiesByName`` of the immutable model, once built; read and written under
    /// `frozenIndexLock`. An `NSLock`, as every lock of the library: ThreadSanitizer sees its
    /// ordering, where it reported the first fills of a `Synchronization.Mutex` on eight queues at
    /// once as a race (`SharedModelTests`, CI).
    private var frozenIndex: [String: NSEntityDescription]?
    private let frozenIndexLock = NSLock()

    /// The entity a model class's objects belong to in this model, as `find` answers it, kept once
    /// the model is immutable (a coordinator uses it), so that `Employee(context:)` looks the
    /// class up once, not by its name for every object (about a tenth of inserting through a
    /// model class). No answer is kept when `find` has none.
    func entity(forModelClass modelClass: AnyClass, find: () -> NSEntityDescription?) -> NSEntityDescription? {
        guard !isEditable else { return find() }
        let key = ObjectIdentifier(modelClass)
        frozenIndexLock.lock()
        let known = entitiesByClass[key]
        frozenIndexLock.unlock()
        if let known { return known }
        guard let found = find() else { return nil }
        frozenIndexLock.lock()
        entitiesByClass[key] = found
        frozenIndexLock.unlock()
        return found
    }
    /// ``entity(forModelClass:find:)``'s answers, under `frozenIndexLock`.
    private var entitiesByClass: [ObjectIdentifier: NSEntityDescription] = [:]

    private static func index(_ entities: [NSEntityDescription]) -> [String: NSEntityDescription] {
        Dictionary(entities.compactMap { entity in entity.name.map { ($0, entity) } }, uniquingKeysWith: { a, _ in a })
    }

    /// The names of the model's configurations (besides the default configuration, which has every entity).
    open var configurations: [String] { configurationOrder }

    /// The entities of a configuration; `nil` names the default configuration (every entity).
    open func entities(forConfigurationName configuration: String?) -> [NSEntityDescription]? {
        guard let configuration, configuration != "Default", configuration != "PF_DEFAULT_CONFIGURATION_NAME" else {
            return entityList
        }
        return configurationMembers[configuration]
    }

    /// Sets the entities of a named configuration.
    open func setEntities(_ entities: [NSEntityDescription], forConfigurationName configuration: String) {
        precondition(
            isEditable, "NSManagedObjectModel.setEntities(_:forConfigurationName:): can't modify an immutable model")
        if configurationMembers[configuration] == nil { configurationOrder.append(configuration) }
        configurationMembers[configuration] = entities
    }

    /// The model's fetch request templates, keyed by name.
    open var fetchRequestTemplatesByName: [String: NSFetchRequest<NSFetchRequestResult>] { templates }

    /// The fetch request template named `name`, or `nil`.
    open func fetchRequestTemplate(forName name: String) -> NSFetchRequest<NSFetchRequestResult>? {
        templates[name]
    }

    /// A copy of the template named `name` whose predicate has its `$variables` replaced from
    /// `variables`; `nil` when there is no such template.
    ///
    /// ```swift
    /// let request = model.fetchRequestFromTemplate(withName: "RichEmployees", substitutionVariables: ["MIN": 5000])
    /// ```
    open func fetchRequestFromTemplate(withName name: String, substitutionVariables variables: [String: Any])
        -> NSFetchRequest<NSFetchRequestResult>?
    {
        guard let template = templates[name] else { return nil }
        let request = template.copy() as! NSFetchRequest<NSFetchRequestResult>
        request.predicate = template.predicate?.withSubstitutionVariables(variables)
        return request
    }

    /// Adds or replaces (or with `nil`, removes) the template named `name`.
    open func setFetchRequestTemplate(
        _ fetchRequestTemplate: NSFetchRequest<NSFetchRequestResult>?, forName name: String
    ) {
        precondition(
            isEditable, "NSManagedObjectModel.setFetchRequestTemplate(_:forName:): can't modify an immutable model")
        templates[name] = fetchRequestTemplate
    }

    /// The version hash of every entity, keyed by entity name: what a store records to tell whether a
    /// model can open it (`NSStoreModelVersionHashes`).
    open var entityVersionHashesByName: [String: Data] {
        Dictionary(
            entityList.compactMap { entity in entity.name.map { ($0, entity.versionHash) } },
            uniquingKeysWith: { a, _ in a })
    }

    /// Whether a configuration of this model matches the version hashes recorded in a store's metadata.
    open func isConfiguration(withName configuration: String?, compatibleWithStoreMetadata metadata: [String: Any])
        -> Bool
    {
        guard let stored = metadata["NSStoreModelVersionHashes"] as? [String: Any] else { return false }
        let entities = entities(forConfigurationName: configuration) ?? []
        guard stored.count == entities.count else { return false }
        for entity in entities {
            guard let name = entity.name, let hash = stored[name] as? Data, hash == entity.versionHash else {
                return false
            }
        }
        return true
    }

    /// Whether `object` is a model of the same entities as Core Data tells model versions apart:
    /// the same entity names with the same version hashes (``entityVersionHashesByName``). Two
    /// loads of one model file are equal, as on Apple platforms; a model is always equal to itself.
    override open func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? NSManagedObjectModel else { return false }
        if other === self { return true }
        return entityVersionHashesByName == other.entityVersionHashesByName
    }

    /// A hash of the entities' names and version hashes, equal for equal models.
    override open var hash: Int {
        var hasher = Hasher()
        for (name, versionHash) in entityVersionHashesByName.sorted(by: { $0.key < $1.key }) {
            hasher.combine(name)
            hasher.combine(versionHash)
        }
        return hasher.finalize()
    }

    override open var description: String {
        "(<NSManagedObjectModel>) entities \(entityList.compactMap(\.name))"
    }
}
