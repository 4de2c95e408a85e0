/// How the descriptions that belong to an entity refer back to it — a property's `entity`, a
/// relationship's `destinationEntity`, a sub-entity's `superentity`, an index's `entity` —
/// without a weak reference to the entity itself.
///
/// They refer weakly (Apple's are unretained: a model owns its entities, an entity its
/// properties), but a weakly referenced object keeps its counts in a side table, and then every
/// retain and release of it takes the runtime's slow path. Every object a fetch makes is created
/// with its entity, so those were three slow counts an object.
/// The weak references go to this token instead, which the entity owns and which refers to the
/// entity unowned: once the entity is gone, so is the token, and the weak references read `nil`.
final class EntityReference: @unchecked Sendable {
    /// The entity; set once, as the entity is made.
    unowned(safe) var entity: NSEntityDescription?

    init() {}
}

/// A weak reference to an entity, through the entity's ``EntityReference``.
struct WeakEntity {
    private weak var reference: EntityReference?

    init() {}

    /// The entity, or `nil` when none was set or it is gone.
    var entity: NSEntityDescription? {
        get { reference?.entity }
        set { reference = newValue?.reference }
    }
}
