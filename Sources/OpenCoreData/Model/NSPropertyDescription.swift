/// A property of an entity: an attribute, a relationship or a fetched property.
///
/// Related documentation: NSPropertyDescription class reference.
open class NSPropertyDescription: NSObject, @unchecked Sendable {
    /// The property's name, unique within its entity hierarchy.
    open var name: String = "" {
        willSet { entity?.checkEditable("NSPropertyDescription.name") }
    }
    /// Whether the property may be `nil` (or, for a to-many, empty) when saved.
    open var isOptional: Bool = true {
        willSet { entity?.checkEditable("NSPropertyDescription.isOptional") }
    }
    /// Whether the property is kept in memory only and never saved.
    open var isTransient: Bool = false {
        willSet { entity?.checkEditable("NSPropertyDescription.isTransient") }
    }
    /// Whether the property is indexed in the store (deprecated by Apple in favour of fetch indexes).
    open var isIndexed: Bool = false
    /// Application data attached to the property in the model.
    ///
    /// Empty, not `nil`, until set, as Apple's — so `userInfo?["key"] = value` stores the value.
    open var userInfo: [AnyHashable: Any]? = [:]
    /// A string that changes the version hash without other change, to force a migration.
    open var versionHashModifier: String?
    /// The name of this property in the previous model version, for inferred migration.
    open var renamingIdentifier: String?
    /// Whether the property's value is kept in persistent history after the object is deleted.
    open var preservesValueInHistoryOnDeletion: Bool = false

    /// The entity that owns the property. Set when the property is added to an entity.
    open internal(set) var entity: NSEntityDescription? {
        get { entityReference.entity }
        set { entityReference.entity = newValue }
    }
    private var entityReference = WeakEntity()

    private(set) var validationPredicateList: [NSPredicate] = []
    private(set) var validationWarningList: [String] = []

    /// Creates an unnamed, optional, non-transient property.
    override public init() {
        super.init()
    }

    /// The validation predicates, each with the warning in ``validationWarnings`` at the same index.
    open var validationPredicates: [NSPredicate] { validationPredicateList }

    /// The warning strings (or error descriptions) of the validation predicates.
    open var validationWarnings: [Any] { validationWarningList }

    /// Sets the validation predicates and their warnings; the two arrays have the same length.
    open func setValidationPredicates(_ predicates: [NSPredicate]?, withValidationWarnings warnings: [String]?) {
        precondition(
            (predicates?.count ?? 0) == (warnings?.count ?? 0),
            "setValidationPredicates: \(predicates?.count ?? 0) predicates but \(warnings?.count ?? 0) warnings")
        validationPredicateList = predicates ?? []
        validationWarningList = warnings ?? []
    }

    /// The property's version hash: SHA-256 over the facts that change its storage (see
    /// STORE-FORMAT.md, "Version hashes").
    open var versionHash: Data { Data(VersionHash.property(self)) }

    override open var description: String {
        "(\(type(of: self))) \(name)\(isOptional ? ", optional" : "")\(isTransient ? ", transient" : "")"
    }
}
