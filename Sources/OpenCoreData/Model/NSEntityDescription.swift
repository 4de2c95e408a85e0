import Synchronization

/// An entity of a managed object model: its name, class, properties and place in an inheritance
/// hierarchy.
///
/// `properties`, `propertiesByName`, `attributesByName` and `relationshipsByName` include the
/// properties inherited from super-entities, as Apple's do.
open class NSEntityDescription: NSObject, @unchecked Sendable {
    /// The entity's name, unique within the model.
    open var name: String? {
        willSet { checkEditable("NSEntityDescription.name") }
    }
    /// The name of the class that represents the entity's objects.
    open var managedObjectClassName: String! = "NSManagedObject"
    /// Xcode's Codegen setting from the model source (`codeGenerationType`: `"class"`,
    /// `"category"`, or `nil` for Manual/None). Only code generation reads it.
    package var codeGenerationType: String?
    /// Whether the entity can have no instances of its own, only of sub-entities.
    open var isAbstract: Bool = false {
        willSet { checkEditable("NSEntityDescription.isAbstract") }
    }
    /// Application data attached to the entity in the model.
    ///
    /// Empty, not `nil`, until set, as Apple's — so `userInfo?["key"] = value` stores the value.
    open var userInfo: [AnyHashable: Any]? = [:]
    /// A string that changes the version hash without other change, to force a migration.
    open var versionHashModifier: String?
    /// The name of this entity in the previous model version, for inferred migration.
    open var renamingIdentifier: String?
    /// The fetch indexes of the entity.
    open var indexes: [NSFetchIndexDescription] = [] {
        didSet { for index in indexes { index.entity = self } }
    }
    /// The entity's uniqueness constraints: each an array of property names (or descriptions)
    /// whose values together must be unique.
    open var uniquenessConstraints: [[Any]] = [] {
        willSet { checkEditable("NSEntityDescription.uniquenessConstraints") }
    }
    /// Names of configurations recorded by a model file, resolved by the model.
    var compoundIndexNames: [[String]] = []

    /// The model that owns the entity.
    open internal(set) weak var managedObjectModel: NSManagedObjectModel?
    /// The parent entity, if this is a sub-entity.
    open internal(set) var superentity: NSEntityDescription? {
        get { superentityReference.entity }
        set { superentityReference.entity = newValue }
    }
    private var superentityReference = WeakEntity()
    /// What the entity's descriptions refer back to it by (``EntityReference``).
    let reference = EntityReference()

    /// Caches filled lazily on a model that contexts on many queues share; behind a lock.
    private let cacheLock = NSLock()
    private var storedLayout: EntityLayout?
    private var storedObjectClass: AnyClass?
    /// ``frozenIndexes`` once built.
    private var storedIndexes: Indexes?

    /// `storedLayout` once set, published for reads without the lock. Every object made (each
    /// fault a fetch registers, each insert) reads its entity's layout, and the lock and unlock
    /// were a cost on every object. The
    /// layout is set once and never replaced, and `storedLayout` keeps it alive for the entity's
    /// life, so the published reference is not retained.
    private let publishedLayout = Atomic<Unmanaged<EntityLayout>?>(nil)

    /// The slot layout of the entity's objects, once the model is immutable (see `layout`).
    var cachedLayout: EntityLayout? {
        publishedLayout.load(ordering: .acquiring)?.takeUnretainedValue()
    }

    /// Keeps `layout` unless another thread cached one first; answers the one kept.
    func cacheLayout(_ layout: EntityLayout) -> EntityLayout {
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let existing = storedLayout { return existing }
        storedLayout = layout
        // Published after `storedLayout` holds it: a reader never sees a layout nothing keeps.
        publishedLayout.store(Unmanaged.passUnretained(layout), ordering: .releasing)
        return layout
    }

    /// The class that represents the entity's objects, once resolved from `managedObjectClassName`.
    var cachedObjectClass: AnyClass? {
        get {
            cacheLock.lock()
            defer { cacheLock.unlock() }
            return storedObjectClass
        }
        set {
            cacheLock.lock()
            defer { cacheLock.unlock() }
            storedObjectClass = newValue
        }
    }

    private var ownProperties: [NSPropertyDescription] = []
    private var children: [NSEntityDescription] = []
    var superentityName: String?

    /// Creates an empty entity.
    override public init() {
        super.init()
        reference.entity = self
    }

    /// The entity's direct sub-entities. Setting them makes this entity their super-entity.
    open var subentities: [NSEntityDescription] {
        get { children }
        set {
            checkEditable("NSEntityDescription.subentities")
            for child in children where child.superentity === self { child.superentity = nil }
            children = newValue
            for child in newValue { child.superentity = self }
        }
    }

    /// The sub-entities keyed by name.
    open var subentitiesByName: [String: NSEntityDescription] {
        Dictionary(children.compactMap { child in child.name.map { ($0, child) } }, uniquingKeysWith: { a, _ in a })
    }

    /// All properties, inherited ones first. Setting it replaces this entity's own properties.
    open var properties: [NSPropertyDescription] {
        get { (superentity?.properties ?? []) + ownProperties }
        set {
            checkEditable("NSEntityDescription.properties")
            for property in ownProperties where property.entity === self { property.entity = nil }
            ownProperties = newValue
            for property in newValue { property.entity = self }
        }
    }

    /// The properties this entity declares itself, without inherited ones.
    var declaredProperties: [NSPropertyDescription] { ownProperties }

    /// All properties keyed by name, inherited ones included.
    open var propertiesByName: [String: NSPropertyDescription] {
        frozenIndexes?.properties ?? Self.byName(properties)
    }

    /// All attributes keyed by name, inherited ones included.
    open var attributesByName: [String: NSAttributeDescription] {
        frozenIndexes?.attributes ?? propertiesByName.compactMapValues { $0 as? NSAttributeDescription }
    }

    /// All relationships keyed by name, inherited ones included.
    open var relationshipsByName: [String: NSRelationshipDescription] {
        frozenIndexes?.relationships ?? propertiesByName.compactMapValues { $0 as? NSRelationshipDescription }
    }

    /// `properties` keyed by name, a property declared here winning over an inherited one.
    private static func byName(_ properties: [NSPropertyDescription]) -> [String: NSPropertyDescription] {
        Dictionary(properties.map { ($0.name, $0) }, uniquingKeysWith: { _, own in own })
    }

    /// The by-name dictionaries of an entity whose model is immutable.
    private struct Indexes {
        let properties: [String: NSPropertyDescription]
        let attributes: [String: NSAttributeDescription]
        let relationships: [String: NSRelationshipDescription]
    }

    /// The by-name dictionaries, built once the model is immutable (a coordinator uses it), as
    /// the model's ``NSManagedObjectModel/entitiesByName`` is: every fetch checks its key paths
    /// against them, and each read built a dictionary of every property, then filtered it.
    /// `nil` while the model can change.
    private var frozenIndexes: Indexes? {
        guard let model = managedObjectModel, !model.isEditable else { return nil }
        cacheLock.lock()
        defer { cacheLock.unlock() }
        if let storedIndexes { return storedIndexes }
        let properties = Self.byName(self.properties)
        let built = Indexes(
            properties: properties, attributes: properties.compactMapValues { $0 as? NSAttributeDescription },
            relationships: properties.compactMapValues { $0 as? NSRelationshipDescription })
        storedIndexes = built
        return built
    }

    /// The relationships whose destination is `entity`.
    open func relationships(forDestination entity: NSEntityDescription) -> [NSRelationshipDescription] {
        properties.compactMap { $0 as? NSRelationshipDescription }.filter { $0.destinationEntity === entity }
    }

    /// Whether this entity is `entity` or one of its sub-entities.
    open func isKindOf(entity: NSEntityDescription) -> Bool {
        var current: NSEntityDescription? = self
        while let candidate = current {
            if candidate === entity { return true }
            current = candidate.superentity
        }
        return false
    }

    /// The entity's version hash: SHA-256 over its name, abstractness, parent's hash, the hashes of
    /// its stored properties and its uniqueness constraints (STORE-FORMAT.md, "Version hashes").
    open var versionHash: Data { Data(VersionHash.entity(self)) }

    /// Returns the entity named `entityName` in `model`.
    ///
    /// > Note: Differs from Apple Core Data: an addition beside Apple's
    /// > `entity(forEntityName:in: NSManagedObjectContext)`, for code that holds a model but no context.
    open class func entity(forEntityName entityName: String, in model: NSManagedObjectModel) -> NSEntityDescription? {
        model.entitiesByName[entityName]
    }

    /// Traps when the entity's model is in use by a coordinator: Apple raises
    /// NSInternalInconsistencyException ("Can't modify an immutable model").
    func checkEditable(_ api: String) {
        if let model = managedObjectModel, !model.isEditable {
            preconditionFailure("\(api): can't modify an immutable model (a persistent store coordinator uses it)")
        }
    }

    override open var description: String {
        "(<NSEntityDescription>) name \(name ?? "nil"), managedObjectClassName \(managedObjectClassName ?? ""), properties \(properties.map(\.name))"
    }
}
