/// Finds the class of an entity's objects and the entity of a class, without the Objective-C
/// runtime.
///
/// An entity's `managedObjectClassName` may be `Employee`, `MyApp.Employee`, `.Employee` or
/// `$(PRODUCT_MODULE_NAME).Employee`. A class matches when its module-qualified name or its bare
/// name equals the name with the module placeholder removed. A class becomes known to an entity
/// when it is used with Core Data (`Employee(context:)`, `Employee.entity()`,
/// `NSFetchRequest<Employee>`), and is otherwise looked up among the classes of the loaded images
/// the first time an object of the entity is made (``SwiftClassIndex``).
enum ManagedObjectClasses {
    private static let state = LiveModels()
    private static let generated = GeneratedClasses()

    /// Remembers classes the model generator knows (``_registerGeneratedClasses(_:)``), by bare
    /// and module-qualified name.
    static func register(_ classes: [NSManagedObject.Type]) { generated.add(classes) }

    /// When `objectClass` is a class the model generator wrote accessors for, registers every
    /// model class of its module: the first typed use of any of them (`Book(context:)`,
    /// `Book.entity()`, a fetch of `NSFetchRequest<Book>`) makes the objects of all their
    /// entities — related ones, and those of untyped fetches — instances of their classes.
    static func registerModule(of objectClass: Any.Type) {
        (objectClass as? _GeneratedModelClass.Type)?._registerModelClasses()
    }

    /// Models of live coordinators, searched by `NSManagedObject.entity()`.
    static var liveModels: [NSManagedObjectModel] { state.models }

    static func noteLive(_ model: NSManagedObjectModel) { state.add(model) }

    /// The entity in `models` whose class name names `objectClass`; remembers the class for it.
    /// An immutable model keeps its answer (``NSManagedObjectModel/entity(forModelClass:find:)``),
    /// so the class's names are made and compared once, not for every object.
    static func entity(for objectClass: NSManagedObject.Type, in models: [NSManagedObjectModel])
        -> NSEntityDescription?
    {
        var names: (qualified: String, bare: String)?
        func classNames() -> (qualified: String, bare: String) {
            if let names { return names }
            registerModule(of: objectClass)
            let made = (String(reflecting: objectClass), String(describing: objectClass))
            names = made
            return made
        }
        for model in models {
            let found = model.entity(forModelClass: objectClass) {
                let (qualified, bare) = classNames()
                guard let entity = model.entities.first(where: { matches($0.managedObjectClassName, qualified, bare) })
                else { return nil }
                entity.cachedObjectClass = objectClass
                return entity
            }
            if let found { return found }
        }
        if names == nil { registerModule(of: objectClass) }
        return nil
    }

    /// Remembers `objectClass` for `entity` when the entity's class name names it.
    static func note(_ objectClass: Any.Type, for entity: NSEntityDescription) {
        registerModule(of: objectClass)
        guard entity.cachedObjectClass == nil, let objectClass = objectClass as? NSManagedObject.Type,
            objectClass != NSManagedObject.self,
            matches(entity.managedObjectClassName, String(reflecting: objectClass), String(describing: objectClass))
        else { return }
        entity.cachedObjectClass = objectClass
    }

    /// The class to instantiate for `entity`: the remembered class, a class found by its
    /// qualified name, the super-entity's class, or `NSManagedObject`.
    static func objectClass(for entity: NSEntityDescription) -> NSManagedObject.Type {
        if let known = entity.cachedObjectClass as? NSManagedObject.Type { return known }
        let name = normalized(entity.managedObjectClassName)
        if name != "NSManagedObject", let found = generated.class(named: name) {
            entity.cachedObjectClass = found
            return found
        }
        if name != "NSManagedObject", let found = classNamed(name) {
            entity.cachedObjectClass = found
            return found
        }
        if let parent = entity.superentity { return objectClass(for: parent) }
        return NSManagedObject.self
    }

    /// The one `NSManagedObject` subclass a class name names among the loaded images' classes: a
    /// module-qualified name by type-name lookup, a bare name (`Employee`, as Xcode writes it) by
    /// the classes whose name it is. Nil when none is, or when several modules have one (then
    /// only the module-qualified name tells them apart).
    private static func classNamed(_ name: String) -> NSManagedObject.Type? {
        looked.answer(for: name) {
            if name.contains("."), let found = _typeByName(name) as? NSManagedObject.Type { return found }
            #if !canImport(Darwin)
                let candidates = SwiftClassIndex.loaded.classes(named: name).compactMap { $0 as? NSManagedObject.Type }
                return candidates.count == 1 ? candidates[0] : nil
            #else
                return nil
            #endif
        }
    }

    private static let looked = LookedUpNames()

    private static func normalized(_ name: String?) -> String {
        var name = name ?? "NSManagedObject"
        if name.hasPrefix("$(PRODUCT_MODULE_NAME).") { name.removeFirst("$(PRODUCT_MODULE_NAME).".count) }
        if name.hasPrefix(".") { name.removeFirst() }
        return name
    }

    private static func matches(_ className: String?, _ qualified: String, _ bare: String) -> Bool {
        let name = normalized(className)
        return name == qualified || name == bare
    }
}

/// The models of coordinators, held weakly.
private final class LiveModels: @unchecked Sendable {
    private struct Weak { weak var model: NSManagedObjectModel? }
    private let lock = NSLock()
    private var entries: [Weak] = []

    var models: [NSManagedObjectModel] {
        lock.lock()
        defer { lock.unlock() }
        return entries.compactMap(\.model)
    }

    func add(_ model: NSManagedObjectModel) {
        lock.lock()
        defer { lock.unlock() }
        entries.removeAll { $0.model == nil || $0.model === model }
        entries.append(Weak(model: model))
    }
}

/// Class names already looked up among the loaded images, with what was found (nil: nothing, or
/// several), so that making objects of an entity whose class does not exist looks once.
private final class LookedUpNames: @unchecked Sendable {
    private let lock = NSLock()
    private var answers: [String: NSManagedObject.Type?] = [:]

    func answer(for name: String, lookUp: () -> NSManagedObject.Type?) -> NSManagedObject.Type? {
        lock.lock()
        if let known = answers[name] {
            lock.unlock()
            return known
        }
        lock.unlock()
        let found = lookUp()
        lock.lock()
        answers[name] = found
        lock.unlock()
        return found
    }
}

/// The classes the model generator registered, by bare and module-qualified name (a bare name two
/// modules share is ambiguous and left out: its entities need the qualified name).
private final class GeneratedClasses: @unchecked Sendable {
    private let lock = NSLock()
    private var byName: [String: NSManagedObject.Type] = [:]
    private var ambiguous: Set<String> = []

    func add(_ classes: [NSManagedObject.Type]) {
        lock.lock()
        defer { lock.unlock() }
        for objectClass in classes {
            byName[String(reflecting: objectClass)] = objectClass
            let bare = String(describing: objectClass)
            if let existing = byName[bare], existing != objectClass { ambiguous.insert(bare) }
            byName[bare] = objectClass
        }
    }

    func `class`(named name: String) -> NSManagedObject.Type? {
        lock.lock()
        defer { lock.unlock() }
        return ambiguous.contains(name) ? nil : byName[name]
    }
}

/// Registers model classes so that objects of the entities naming them are created as these
/// classes from the first fetch on, with no other use of the class first (the Objective-C
/// runtime's class table does this on Apple platforms). The accessors `CoreDataModelGenerator`
/// writes call it once per module; not meant to be called directly.
public func _registerGeneratedClasses(_ classes: [NSManagedObject.Type]) {
    ManagedObjectClasses.register(classes)
}

/// A model class of a module built through the `CoreDataModelGenerator` plugin (the generated
/// accessor file declares the conformance); not meant to be adopted by hand.
public protocol _GeneratedModelClass: NSManagedObject {
    /// Registers every model class of the class's module with Core Data (once).
    static func _registerModelClasses()
}
