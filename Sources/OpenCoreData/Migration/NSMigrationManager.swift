import Synchronization

/// Migrates a store from one model to another with a mapping model: the source store is read
/// into a source context, the objects the mapping model describes are made in a destination
/// context over a new store, and that store is saved.
///
/// The migration runs in Apple's three passes over the entity mappings, each through the mapping's
/// ``NSEntityMigrationPolicy`` (the one the mapping names, else the default policy): every
/// mapping's destination instances are created (`begin`, `createDestinationInstances` for each
/// source instance its source expression fetches, `endInstanceCreation`); then every mapping's
/// relationships (`createRelationships` for each destination instance,
/// `endRelationshipCreation`); then validation (`performCustomValidation`, `end`). Value
/// expressions see `$manager`, `$source`, `$destination`, `$entityMapping`, `$propertyMapping` and
/// `$entityPolicy`, and call `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", …)`
/// to relate migrated objects.
///
/// ```swift
/// let manager = NSMigrationManager(sourceModel: v1, destinationModel: v2)
/// try manager.migrateStore(
///     from: oldURL, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
///     toDestinationURL: newURL, destinationType: NSSQLiteStoreType, destinationOptions: nil)
/// ```
///
/// Related documentation: NSMigrationManager reference; Core Data Model Versioning and Data
/// Migration Programming Guide, "The Migration Process" and "Customizing the Migration Process".
open class NSMigrationManager: NSObject, PredicateFunctionReceiver, KeyValueCoding, @unchecked Sendable {
    /// The model of the stores migrated from.
    public let sourceModel: NSManagedObjectModel
    /// The model of the stores migrated to.
    public let destinationModel: NSManagedObjectModel
    private var mapping = NSMappingModel()
    private var source: NSManagedObjectContext?
    private var destination: NSManagedObjectContext?
    private var current: NSEntityMapping?
    /// Per entity mapping name: destination instances by source object ID, and back.
    private var destinationsBySource: [String: [NSManagedObjectID: [NSManagedObject]]] = [:]
    private var sourcesByDestination: [String: [ObjectIdentifier: [NSManagedObject]]] = [:]
    /// Destination instances per entity mapping name, in the order they were made.
    private var destinationsByMapping: [String: [NSManagedObject]] = [:]
    /// Destination instances by source object ID, whichever mapping made them.
    private var destinationsByAnySource: [NSManagedObjectID: [NSManagedObject]] = [:]
    private var cancellation: (any Error)?
    /// Steps done and steps in all, read from any thread (a progress display polls them).
    private let done = Atomic<Int>(0)
    private let total = Atomic<Int>(1)

    /// Dictionary of your own, for policies to share state.
    open var userInfo: [AnyHashable: Any]?

    /// Whether a store type may use a migration manager of its own; the built-in stores migrate
    /// with this one.
    open var usesStoreSpecificMigrationManager = true

    /// A manager that migrates stores of `sourceModel` to `destinationModel`.
    public init(sourceModel: NSManagedObjectModel, destinationModel: NSManagedObjectModel) {
        self.sourceModel = sourceModel
        self.destinationModel = destinationModel
        super.init()
    }

    /// The mapping model of the migration in progress (or the last one).
    open var mappingModel: NSMappingModel { mapping }

    /// The context the source store is read in, during a migration.
    open var sourceContext: NSManagedObjectContext {
        if let source { return source }
        return Self.detachedContext(sourceModel)
    }

    /// The context the destination store is written in, during a migration.
    open var destinationContext: NSManagedObjectContext {
        if let destination { return destination }
        return Self.detachedContext(destinationModel)
    }

    private static func detachedContext(_ model: NSManagedObjectModel) -> NSManagedObjectContext {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        return context
    }

    /// The entity mapping being migrated.
    open var currentEntityMapping: NSEntityMapping { current ?? NSEntityMapping() }

    /// How far the migration is, from 0 to 1.
    open var migrationProgress: Float {
        Float(done.load(ordering: .relaxed)) / Float(max(total.load(ordering: .relaxed), 1))
    }

    /// The source model's entity the mapping migrates from.
    open func sourceEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.sourceEntityName.flatMap { sourceModel.entitiesByName[$0] }
    }

    /// The destination model's entity the mapping migrates to.
    open func destinationEntity(for mEntity: NSEntityMapping) -> NSEntityDescription? {
        mEntity.destinationEntityName.flatMap { destinationModel.entitiesByName[$0] }
    }

    /// Forgets every association and both contexts.
    open func reset() {
        source = nil
        destination = nil
        current = nil
        destinationsBySource = [:]
        sourcesByDestination = [:]
        destinationsByMapping = [:]
        destinationsByAnySource = [:]
        cancellation = nil
        done.store(0, ordering: .relaxed)
        total.store(1, ordering: .relaxed)
    }

    /// Records that `destinationInstance` was made from `sourceInstance` by `entityMapping`.
    open func associate(
        sourceInstance: NSManagedObject, withDestinationInstance destinationInstance: NSManagedObject,
        for entityMapping: NSEntityMapping
    ) {
        let name = entityMapping.name ?? ""
        destinationsBySource[name, default: [:]][sourceInstance.objectID, default: []].append(destinationInstance)
        sourcesByDestination[name, default: [:]][ObjectIdentifier(destinationInstance), default: []].append(
            sourceInstance)
        destinationsByMapping[name, default: []].append(destinationInstance)
        destinationsByAnySource[sourceInstance.objectID, default: []].append(destinationInstance)
    }

    /// The destination instances the mapping named `mappingName` made from `sourceInstances`
    /// (from every source instance when `nil`).
    open func destinationInstances(
        forEntityMappingName mappingName: String, sourceInstances: [NSManagedObject]?
    ) -> [NSManagedObject] {
        guard let sourceInstances else { return destinationsByMapping[mappingName] ?? [] }
        let table = destinationsBySource[mappingName] ?? [:]
        return sourceInstances.flatMap { table[$0.objectID] ?? [] }
    }

    /// The source instances the mapping named `mappingName` made `destinationInstances` from
    /// (every source instance when `nil`).
    open func sourceInstances(
        forEntityMappingName mappingName: String, destinationInstances: [NSManagedObject]?
    ) -> [NSManagedObject] {
        let table = sourcesByDestination[mappingName] ?? [:]
        guard let destinationInstances else { return table.values.flatMap { $0 } }
        return destinationInstances.flatMap { table[ObjectIdentifier($0)] ?? [] }
    }

    /// Stops the migration in progress: `migrateStore` throws `error` at its next step. Called
    /// before `migrateStore`, the next `migrateStore` throws it before it begins.
    open func cancelMigrationWithError(_ error: any Error) {
        cancellation = error
    }

    /// Migrates the store at `sourceURL` into a new store at `destinationURL` as `mapping` says: the
    /// typed spelling of
    /// ``migrateStore(from:sourceType:options:with:toDestinationURL:destinationType:destinationOptions:)``.
    ///
    /// - Throws: what that method throws.
    public func migrateStore(
        from sourceURL: URL, type sourceType: NSPersistentStore.StoreType,
        options sourceOptions: [AnyHashable: Any]? = nil,
        mapping: NSMappingModel, to destinationURL: URL, type destinationType: NSPersistentStore.StoreType,
        options destinationOptions: [AnyHashable: Any]? = nil
    ) throws {
        try migrateStore(
            from: sourceURL, sourceType: sourceType.rawValue, options: sourceOptions, with: mapping,
            toDestinationURL: destinationURL, destinationType: destinationType.rawValue,
            destinationOptions: destinationOptions)
    }

    /// Migrates the store at `sourceURL` into a new store at `dURL` as `mappings` says.
    ///
    /// The source store is opened read-only and left as it was. The destination store is saved
    /// once, at the end; a failure leaves no destination store behind.
    ///
    /// - Throws: the error a policy throws or cancels with; `NSMigrationMissingMappingModelError`
    ///   (134140) without a mapping model; `NSMigrationError` (134110) wrapping a failure to
    ///   read the source or save the destination (the cause under `NSUnderlyingErrorKey`).
    open func migrateStore(
        from sourceURL: URL, sourceType sStoreType: String, options sOptions: [AnyHashable: Any]? = nil,
        with mappings: NSMappingModel?, toDestinationURL dURL: URL, destinationType dStoreType: String,
        destinationOptions dOptions: [AnyHashable: Any]? = nil
    ) throws {
        guard let mappings else {
            throw CoreDataError.make(
                NSMigrationMissingMappingModelError, "No mapping model was given for the migration.")
        }
        // A migration cancelled before it started ends at its first step, as one cancelled while it
        // runs does; the cancellation is spent on it.
        let cancelledBefore = cancellation
        reset()
        if let cancelledBefore { throw cancelledBefore }
        mapping = mappings
        let sourceCoordinator = NSPersistentStoreCoordinator(managedObjectModel: sourceModel)
        var readOptions = sOptions ?? [:]
        readOptions[NSReadOnlyPersistentStoreOption] = true
        readOptions[NSMigratePersistentStoresAutomaticallyOption] = false
        do {
            try sourceCoordinator.addPersistentStore(
                ofType: sStoreType, configurationName: nil, at: sourceURL, options: readOptions)
        } catch {
            throw Self.migrationError("The source store could not be read with the source model.", error)
        }
        let sourceContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        sourceContext.persistentStoreCoordinator = sourceCoordinator
        source = sourceContext
        let destinationCoordinator = NSPersistentStoreCoordinator(managedObjectModel: destinationModel)
        let destinationStore: NSPersistentStore
        do {
            destinationStore = try destinationCoordinator.addPersistentStore(
                ofType: dStoreType, configurationName: nil, at: dURL, options: dOptions)
        } catch {
            throw Self.migrationError("The destination store could not be created.", error)
        }
        let destinationContext = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        destinationContext.persistentStoreCoordinator = destinationCoordinator
        destination = destinationContext
        do {
            try migrate(mappings.entityMappings)
            if let metadata = sourceCoordinator.persistentStores.first?.metadata {
                var carried = destinationStore.metadata ?? [:]
                for (key, value) in metadata where !key.hasPrefix("NS") && !key.hasPrefix("_NS") {
                    carried[key] = value
                }
                destinationStore.metadata = carried
            }
            do {
                try destinationContext.save()
            } catch {
                throw Self.migrationError("The migrated objects could not be saved.", error)
            }
        } catch {
            try? destinationCoordinator.remove(destinationStore)
            try? destinationCoordinator.destroyPersistentStore(at: dURL, ofType: dStoreType, options: dOptions)
            throw error
        }
        // The destination is finished when this returns: apps move its file into place, often the
        // main file alone. Removing the stores closes their files — an SQLite store's last
        // connection checkpoints its WAL into the main file and deletes it. The objects the two
        // contexts hold keep their values.
        try? destinationCoordinator.remove(destinationStore)
        for store in sourceCoordinator.persistentStores { try? sourceCoordinator.remove(store) }
        done.store(total.load(ordering: .relaxed), ordering: .relaxed)
    }

    private static func migrationError(_ message: String, _ error: any Error) -> NSError {
        CoreDataError.make(NSMigrationError, message, [NSUnderlyingErrorKey: error])
    }

    /// The three passes.
    private func migrate(_ mappings: [NSEntityMapping]) throws {
        for mapping in mappings { try checkKeyPaths(of: mapping) }
        let policies = try mappings.map(policy(for:))
        var sources: [[NSManagedObject]] = []
        for mapping in mappings {
            sources.append(try sourceInstances(of: mapping))
        }
        total.store(max(1, sources.reduce(0) { $0 + $1.count } * 2 + mappings.count), ordering: .relaxed)
        for (mapping, (policy, instances)) in zip(mappings, zip(policies, sources)) {
            current = mapping
            try policy.begin(mapping, with: self)
            for instance in instances {
                try checkCancelled()
                if mapping.mappingType != .removeEntityMappingType, mapping.destinationEntityName != nil {
                    try policy.createDestinationInstances(forSource: instance, in: mapping, manager: self)
                }
                done.add(1, ordering: .relaxed)
            }
            try policy.endInstanceCreation(forMapping: mapping, manager: self)
        }
        for (mapping, policy) in zip(mappings, policies) {
            current = mapping
            for instance in destinationsByMapping[mapping.name ?? ""] ?? [] {
                try checkCancelled()
                try policy.createRelationships(forDestination: instance, in: mapping, manager: self)
                done.add(1, ordering: .relaxed)
            }
            try policy.endRelationshipCreation(forMapping: mapping, manager: self)
        }
        for (mapping, policy) in zip(mappings, policies) {
            current = mapping
            try checkCancelled()
            try policy.performCustomValidation(forMapping: mapping, manager: self)
            try policy.end(mapping, manager: self)
            done.add(1, ordering: .relaxed)
        }
    }

    /// Refuses a value expression whose key paths from the source instance name properties the
    /// source entity does not have: key-value coding on a managed object traps on an unknown
    /// key, and a mapping model is a file.
    ///
    /// - Throws: `NSMigrationError` (134110) naming the mapping, the property and the key.
    private func checkKeyPaths(of mapping: NSEntityMapping) throws {
        guard let entity = sourceEntity(for: mapping) else { return }
        for property in (mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? []) {
            guard let expression = property.valueExpression else { continue }
            if let key = Self.unknownKey(in: expression, entity: entity) {
                throw CoreDataError.make(
                    NSMigrationError,
                    "The value expression of \(mapping.name ?? "?").\(property.name ?? "?") reads \(key), which "
                        + "\(entity.name ?? "the source entity") does not have.",
                    ["reason": "unknown key \(key)", NSMigrationEntityMappingKey: mapping])
            }
        }
    }

    /// The first key, along a key path from `$source` (or the evaluated object, the source), that
    /// the entities on its way do not have.
    private static func unknownKey(in expression: NSExpression, entity: NSEntityDescription) -> String? {
        switch expression.node {
        case .keyPath(let operand, let path):
            var fromSource = operand == nil
            if let operand {
                if case .variable(NSMigrationSourceObjectKey) = operand.node { fromSource = true }
                if let key = unknownKey(in: operand, entity: entity) { return key }
            }
            guard fromSource else { return nil }
            var current: NSEntityDescription? = entity
            for component in path.components {
                guard let here = current, !component.hasPrefix("@") else { return nil }
                guard let property = here.propertiesByName[component] else { return component }
                current = (property as? NSRelationshipDescription)?.destinationEntity
            }
            return nil
        case .function(let name, let operand, let arguments):
            // `FUNCTION($source, 'valueForKey:', 'key')` reads the key as a key path would.
            if name == "valueForKey:" || name == "valueForKeyPath:", let operand, arguments.count == 1,
                case .variable(NSMigrationSourceObjectKey) = operand.node,
                case .constant(let key as String) = arguments[0].node
            {
                let path = name == "valueForKey:" ? KeyPathComponents(components: [key]) : KeyPathComponents(key)
                return unknownKey(in: NSExpression(node: .keyPath(operand: operand, path: path)), entity: entity)
            }
            return (operand.map { [$0] } ?? []).lazy.compactMap { unknownKey(in: $0, entity: entity) }.first
                ?? arguments.lazy.compactMap { unknownKey(in: $0, entity: entity) }.first
        case .aggregate(let elements):
            return elements.lazy.compactMap { unknownKey(in: $0, entity: entity) }.first
        default:
            return nil
        }
    }

    private func checkCancelled() throws {
        if let cancellation { throw cancellation }
    }

    /// The policy the mapping names — found by its module-qualified or bare class name among the
    /// loaded Swift classes (Xcode writes `$(PRODUCT_MODULE_NAME).Policy`; a module name this
    /// program does not have falls back to the bare name) — else the default one.
    ///
    /// - Throws: `NSMigrationError` (134110) when the mapping names a class that is not found.
    private func policy(for mapping: NSEntityMapping) throws -> NSEntityMigrationPolicy {
        guard let name = mapping.entityMigrationPolicyClassName, !name.isEmpty, name != "NSEntityMigrationPolicy"
        else { return NSEntityMigrationPolicy() }
        #if canImport(Darwin)
            let found = NSClassFromString(name) as? NSEntityMigrationPolicy.Type
        #else
            let bare = name.split(separator: ".").last.map(String.init) ?? name
            let exact = SwiftClassIndex.loaded.classes(named: name).compactMap { $0 as? NSEntityMigrationPolicy.Type }
            let found =
                exact.first
                ?? SwiftClassIndex.loaded.classes(named: bare).compactMap { $0 as? NSEntityMigrationPolicy.Type }.first
        #endif
        guard let found else {
            throw CoreDataError.make(
                NSMigrationError,
                "The entity mapping \(mapping.name ?? "") names the migration policy \(name), which this program does not have.",
                ["reason": "no class \(name)"])
        }
        return found.init()
    }

    /// The instances the mapping's source expression fetches: every instance of the source
    /// entity (without sub-entities, which have mappings of their own), through its filter.
    private func sourceInstances(of mapping: NSEntityMapping) throws -> [NSManagedObject] {
        guard mapping.sourceEntityName != nil, let sourceContext = source else { return [] }
        let variables = variables(source: nil, destination: nil, mapping: mapping, property: nil, policy: nil)
        guard let expression = mapping.sourceExpression else {
            return try fetch(entity: mapping.sourceEntityName ?? "", predicate: nil, in: sourceContext)
        }
        if case .function("FETCH", nil, let arguments) = expression.node, arguments.count >= 1 {
            if let request = arguments[0].expressionValue(with: nil, context: variables)
                as? NSFetchRequest<
                    NSFetchRequestResult
                >
            {
                return try sourceContext.fetch(request).compactMap { $0 as? NSManagedObject }
            }
        }
        let value = DynamicValue.unwrap(expression.expressionValue(with: nil, context: variables))
        return value.flatMap(DynamicValue.elements)?.compactMap { $0 as? NSManagedObject } ?? []
    }

    private func fetch(entity: String, predicate: NSPredicate?, in context: NSManagedObjectContext) throws
        -> [NSManagedObject]
    {
        let request = NSFetchRequest<NSManagedObject>(entityName: entity)
        request.predicate = predicate
        request.includesSubentities = false
        return try context.fetch(request)
    }

    /// A value expression's value, with the migration's variables bound.
    func evaluate(
        _ expression: NSExpression, source: NSManagedObject?, destination: NSManagedObject?, mapping: NSEntityMapping,
        property: NSPropertyMapping?, policy: NSEntityMigrationPolicy?
    ) -> Any? {
        let variables = variables(
            source: source, destination: destination, mapping: mapping, property: property, policy: policy)
        return DynamicValue.unwrap(expression.expressionValue(with: source, context: variables))
    }

    private func variables(
        source: NSManagedObject?, destination: NSManagedObject?, mapping: NSEntityMapping, property: NSPropertyMapping?,
        policy: NSEntityMigrationPolicy?
    ) -> NSMutableDictionary {
        let variables = NSMutableDictionary()
        variables[NSMigrationManagerKey] = self
        variables[NSMigrationEntityMappingKey] = mapping
        if let source { variables[NSMigrationSourceObjectKey] = source }
        if let destination { variables[NSMigrationDestinationObjectKey] = destination }
        if let property { variables[NSMigrationPropertyMappingKey] = property }
        if let policy { variables[NSMigrationEntityPolicyKey] = policy }
        return variables
    }

    // MARK: What value expressions call

    /// `FUNCTION($manager, …)`: `destinationInstancesForEntityMappingNamed:sourceInstances:`,
    /// `destinationInstancesForSourceRelationshipNamed:sourceInstances:`,
    /// `sourceInstancesForEntityMappingNamed:destinationInstances:` and
    /// `fetchRequestForSourceEntityNamed:predicateString:`. A subclass overrides it to answer
    /// selectors of its own (calling `super` for the others), as an Objective-C subclass adds
    /// methods that `FUNCTION($manager, …)` calls; overriding the methods these selectors name
    /// works too.
    open func predicateFunction(_ selectorName: String, arguments: [Any?]) -> Any? {
        func objects(_ value: Any?) -> [NSManagedObject]? {
            guard let value = DynamicValue.unwrap(value) else { return [] }
            if let object = value as? NSManagedObject { return [object] }
            return DynamicValue.elements(value)?.compactMap { $0 as? NSManagedObject }
        }
        switch selectorName {
        case "destinationInstancesForEntityMappingNamed:sourceInstances:":
            guard arguments.count == 2, let name = arguments[0] as? String else { return nil }
            return destinationInstances(forEntityMappingName: name, sourceInstances: objects(arguments[1]))
        case "destinationInstancesForSourceRelationshipNamed:sourceInstances:":
            // The destinations of a relationship's members, whichever entity mapping made them
            // (a hierarchy's sub-entities each have their own).
            guard arguments.count == 2 else { return nil }
            return (objects(arguments[1]) ?? []).flatMap { destinationsByAnySource[$0.objectID] ?? [] }
        case "sourceInstancesForEntityMappingNamed:destinationInstances:":
            guard arguments.count == 2, let name = arguments[0] as? String else { return nil }
            return sourceInstances(forEntityMappingName: name, destinationInstances: objects(arguments[1]))
        case "fetchRequestForSourceEntityNamed:predicateString:":
            guard arguments.count == 2, let name = arguments[0] as? String else { return nil }
            let request = NSFetchRequest<NSFetchRequestResult>(entityName: name)
            request.includesSubentities = false
            if let format = arguments[1] as? String, format != "TRUEPREDICATE" {
                request.predicate = try? NSPredicate(validatingFormat: format, argumentArray: nil)
            }
            return request
        default:
            return nil
        }
    }

    /// `$manager.sourceContext` and friends.
    open func value(forKey key: String) -> Any? {
        switch key {
        case "sourceContext": sourceContext
        case "destinationContext": destinationContext
        case "sourceModel": sourceModel
        case "destinationModel": destinationModel
        case "mappingModel": mappingModel
        case "currentEntityMapping": currentEntityMapping
        case "migrationProgress": migrationProgress
        case "userInfo": userInfo
        default: nil
        }
    }
}
