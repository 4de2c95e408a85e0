import CoreData
import Foundation
import Testing

/// The policy CoreDataPlus's SampleModel V2→V3 mapping names (`V2to3MakerPolicy`): each car's
/// `maker` string becomes a `Maker` object, one per name, related to the car — written here as
/// an app writes it, against the public NSEntityMigrationPolicy API.
final class V2to3MakerPolicy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard
            let car = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance])
                .first,
            let name = sInstance.value(forKey: "maker") as? String
        else { return }
        var makers = manager.userInfo?["makers"] as? [String: NSManagedObject] ?? [:]
        let maker =
            makers[name]
            ?? {
                let maker = NSEntityDescription.insertNewObject(
                    forEntityName: "Maker", into: manager.destinationContext)
                maker.setValue(name, forKey: "name")
                return maker
            }()
        makers[name] = maker
        manager.userInfo = ["makers": makers]
        car.setValue(maker, forKey: "createdBy")
    }
}

/// The policy objc.io's Moody 5→6 mapping names (`Country5ToCountry6Policy`): version 6 brings
/// back the `Continent` entity version 5 folded into each country's `isoContinent` code, one
/// continent per code.
final class Country5ToCountry6Policy: NSEntityMigrationPolicy {
    override func createDestinationInstances(
        forSource sInstance: NSManagedObject, in mapping: NSEntityMapping, manager: NSMigrationManager
    ) throws {
        try super.createDestinationInstances(forSource: sInstance, in: mapping, manager: manager)
        guard
            let country = manager.destinationInstances(forEntityMappingName: mapping.name, sourceInstances: [sInstance])
                .first,
            let code = (sInstance.value(forKey: "isoContinent") as? NSNumber)?.int16Value, code != 0
        else { return }
        var continents = manager.userInfo?["continents"] as? [Int16: NSManagedObject] ?? [:]
        let continent =
            continents[code]
            ?? {
                let continent = NSEntityDescription.insertNewObject(
                    forEntityName: "Continent", into: manager.destinationContext)
                continent.setValue(code, forKey: "numericISO3166Code")
                return continent
            }()
        continents[code] = continent
        manager.userInfo = ["continents": continents]
        country.setValue(continent, forKey: "continent")
    }
}

/// Mapping models and NSMigrationManager: Xcode's compiled `.cdm` and its
/// `.xcmappingmodel` sources load into the same entity mappings, and the fixtures' lineages
/// migrate through them (NSMappingModel, NSMigrationManager and NSEntityMigrationPolicy
/// references; Core Data Model Versioning and Data Migration Programming Guide, "Mapping
/// Overview", "The Migration Process", "Customizing the Migration Process").
@Suite("Mapping models and the migration manager", .serialized)
struct MappingModelTests {
    let directory = TemporaryDirectory()

    static let sampleModel = "stores/coredataplus-samplemodel/SampleModel/"
    static let moody = "stores/objcio-moody-migrations/"

    func describe(_ model: NSMappingModel) -> [String] {
        model.entityMappings.flatMap { mapping -> [String] in
            let head =
                "\(mapping.name ?? "-") \(mapping.mappingType.rawValue) \(mapping.sourceEntityName ?? "-")→\(mapping.destinationEntityName ?? "-") "
                + "\(mapping.entityMigrationPolicyClassName ?? "-") \(mapping.sourceEntityVersionHash?.base64EncodedString() ?? "-") "
                + "\(mapping.destinationEntityVersionHash?.base64EncodedString() ?? "-") \(mapping.sourceExpression.map { "\($0)" } ?? "-")"
            let properties = ((mapping.attributeMappings ?? []) + (mapping.relationshipMappings ?? [])).map {
                "  \($0.name ?? "-") = \($0.valueExpression.map { "\($0)" } ?? "-")"
            }
            return [head] + properties
        }
    }

    @Test("Xcode's compiled V2toV3.cdm and its .xcmappingmodel source give the same entity mappings")
    func compiledAndSourceAgree() throws {
        guard let root = Fixtures.root() else { return }
        let compiled = try #require(
            NSMappingModel(contentsOf: root.appendingPathComponent(Self.sampleModel + "Fixtures/V2toV3.cdm")))
        let source = try #require(
            NSMappingModel(
                contentsOf: root.appendingPathComponent(Self.sampleModel + "MappingModels/V2toV3.xcmappingmodel")))
        #expect(compiled.entityMappings.count == 5)
        #expect(describe(source) == describe(compiled))
        let car = try #require(compiled.entityMappingsByName["CarToCar"])
        #expect(car.mappingType == .customEntityMappingType)
        #expect(car.entityMigrationPolicyClassName == "REPLACE_AT_RUNTIME.V2to3MakerPolicy")
        #expect(compiled.entityMappingsByName["Maker"]?.mappingType == .addEntityMappingType)
        // Two loads of one mapping model compare equal, as on Apple platforms (a stack library's
        // tests compare the mapping model it found with the one it expects).
        let again = try #require(
            NSMappingModel(contentsOf: root.appendingPathComponent(Self.sampleModel + "Fixtures/V2toV3.cdm")))
        #expect(again == compiled && again.hash == compiled.hash)
        let inferred = try NSMappingModel.inferredMappingModel(
            forSourceModel: CompanyModel.make(), destinationModel: CompanyModel.make())
        #expect(inferred != compiled)
    }

    @Test(
        "Every .xcmappingmodel in the fixtures loads with one entity mapping per XDDEVENTITYMAPPING",
        arguments: XMLStoreTests.mappingFiles)
    func everySourceLoads(path: String) throws {
        guard let root = Fixtures.root() else { return }
        let file = root.appendingPathComponent(path)
        let text = try String(contentsOf: file, encoding: .utf8)
        let model = try #require(NSMappingModel(contentsOf: file.deletingLastPathComponent()))
        #expect(model.entityMappings.count == text.components(separatedBy: "type=\"XDDEVENTITYMAPPING\" id=").count - 1)
        for mapping in model.entityMappings {
            for name in [mapping.sourceEntityName, mapping.destinationEntityName].compactMap({ $0 }) {
                #expect(text.contains("type=\"string\">\(name)</attribute>"))
            }
        }
    }

    @Test("A missing or damaged mapping model is nil, with Cocoa errors 260 and 259 from the throwing loader")
    func badFiles() throws {
        #expect(NSMappingModel(contentsOf: directory.file("none.cdm")) == nil)
        #expect(NSMappingModel(contentsOf: nil) == nil)
        let garbage = directory.file("garbage.cdm")
        try Data("not an archive".utf8).write(to: garbage)
        #expect(NSMappingModel(contentsOf: garbage) == nil)
        let bad = directory.file("bad.xcmappingmodel")
        try FileManager.default.createDirectory(at: bad, withIntermediateDirectories: true)
        try Data("<database></database>".utf8).write(to: bad.appendingPathComponent("xcmapping.xml"))
        #expect(NSMappingModel(contentsOf: bad) == nil)
    }

    /// The SampleModel V2 store migrated to V3 with `mapping`: each car's maker string is a Maker
    /// object, one per name; people keep their cars; every car's previous owners are its owner.
    func migrateSampleModel(with mapping: NSMappingModel, root: URL, store given: URL? = nil) throws {
        let store =
            try given
            ?? FixtureStores.copy(
                "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V2.sqlite", root: root, to: directory)
        let models = root.appendingPathComponent(Self.sampleModel + "SampleModel.xcdatamodeld")
        let v2 = try #require(
            NSManagedObjectModel(contentsOf: models.appendingPathComponent("SampleModel2.xcdatamodel")))
        let v3 = try #require(
            NSManagedObjectModel(contentsOf: models.appendingPathComponent("SampleModel3.xcdatamodel")))
        // What the V2 store holds, read with the V2 model.
        let before = NSPersistentStoreCoordinator(managedObjectModel: v2)
        try before.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: store,
            options: [NSReadOnlyPersistentStoreOption: true])
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = before
        let cars = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        var expected: [String: (maker: String?, owner: String?, entity: String)] = [:]
        for car in cars {
            expected[car.value(forKey: "numberPlate") as? String ?? ""] = (
                car.value(forKey: "maker") as? String,
                (car.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "firstName") as? String,
                car.entity.name ?? ""
            )
        }
        #expect(cars.count > 0)
        let migrated = directory.file("SampleModel_V3-\(UUID().uuidString).sqlite")
        let manager = NSMigrationManager(sourceModel: v2, destinationModel: v3)
        try manager.migrateStore(
            from: store, sourceType: NSSQLiteStoreType, options: nil, with: mapping, toDestinationURL: migrated,
            destinationType: NSSQLiteStoreType, destinationOptions: nil)
        #expect(manager.migrationProgress == 1)
        let after = NSPersistentStoreCoordinator(managedObjectModel: v3)
        try after.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: migrated)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = after
        let migratedCars = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Car"))
        #expect(migratedCars.count == cars.count)
        for car in migratedCars {
            let plate = car.value(forKey: "numberPlate") as? String ?? ""
            let want = try #require(expected[plate])
            #expect(car.entity.name == want.entity)
            #expect(
                (car.value(forKey: "createdBy") as? NSManagedObject)?.value(forKey: "name") as? String == want.maker)
            let owner = (car.value(forKey: "owner") as? NSManagedObject)?.value(forKey: "firstName") as? String
            #expect(owner == want.owner)
            let previous = (car.value(forKey: "previousOwners") as? Set<NSManagedObject>) ?? []
            #expect(previous.compactMap { $0.value(forKey: "firstName") as? String } == (owner.map { [$0] } ?? []))
        }
        let makers = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Maker"))
        #expect(
            Set(makers.compactMap { $0.value(forKey: "name") as? String }) == Set(expected.values.compactMap(\.maker)))
        #expect(makers.count == Set(expected.values.compactMap(\.maker)).count)
        let people = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Person"))
        for person in people {
            let owned = (person.value(forKey: "cars") as? Set<NSManagedObject>) ?? []
            #expect(owned.allSatisfy { ($0.value(forKey: "owner") as? NSManagedObject) === person })
        }
        #expect(FileManager.default.fileExists(atPath: store.path))
    }

    @Test("The SampleModel V2 store migrates to V3 through the compiled .cdm and a custom policy")
    func sampleModelThroughCompiledMapping() throws {
        guard let root = Fixtures.root() else { return }
        let mapping = try #require(
            NSMappingModel(contentsOf: root.appendingPathComponent(Self.sampleModel + "Fixtures/V2toV3.cdm")))
        try migrateSampleModel(with: mapping, root: root)
    }

    @Test("The SampleModel V2 store migrates to V3 through the .xcmappingmodel source alike")
    func sampleModelThroughSourceMapping() throws {
        guard let root = Fixtures.root() else { return }
        let mapping = try #require(
            NSMappingModel(
                contentsOf: root.appendingPathComponent(Self.sampleModel + "MappingModels/V2toV3.xcmappingmodel")))
        try migrateSampleModel(with: mapping, root: root)
    }

    @Test(
        "The SampleModel V1 store, the lineage's oldest, migrates to V2 by an inferred mapping and on to V3 through the .cdm"
    )
    func sampleModelFromTheOldestStore() throws {
        guard let root = Fixtures.root() else { return }
        let models = root.appendingPathComponent(Self.sampleModel + "SampleModel.xcdatamodeld")
        let v1 = try #require(
            NSManagedObjectModel(contentsOf: models.appendingPathComponent("SampleModel.xcdatamodel")))
        let v2 = try #require(
            NSManagedObjectModel(contentsOf: models.appendingPathComponent("SampleModel2.xcdatamodel")))
        let store = try FixtureStores.copy(
            "coredataplus-samplemodel/SampleModel/Fixtures/SampleModel_V1.sqlite", root: root, to: directory)
        let inferred = try NSMappingModel.inferredMappingModel(forSourceModel: v1, destinationModel: v2)
        let second = directory.file("SampleModel_V2-from-V1.sqlite")
        // Through the typed spelling (iOS 15, macOS 12): migrateStore(from:type:options:mapping:to:type:options:).
        try NSMigrationManager(sourceModel: v1, destinationModel: v2).migrateStore(
            from: store, type: .sqlite, mapping: inferred, to: second, type: .sqlite)
        // The renamed entity (ExpensiveSportCar → LuxuryCar, by its renaming identifier) keeps its objects.
        let reader = NSPersistentStoreCoordinator(managedObjectModel: v1)
        try reader.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: store,
            options: [NSReadOnlyPersistentStoreOption: true])
        let old = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        old.persistentStoreCoordinator = reader
        let expensive = try old.count(for: NSFetchRequest<NSManagedObject>(entityName: "ExpensiveSportCar"))
        let writer = NSPersistentStoreCoordinator(managedObjectModel: v2)
        try writer.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: second,
            options: [NSReadOnlyPersistentStoreOption: true])
        let new = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        new.persistentStoreCoordinator = writer
        #expect(try new.count(for: NSFetchRequest<NSManagedObject>(entityName: "LuxuryCar")) == expensive)
        #expect(
            try new.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car"))
                == old.count(for: NSFetchRequest<NSManagedObject>(entityName: "Car")))
        let mapping = try #require(
            NSMappingModel(contentsOf: root.appendingPathComponent(Self.sampleModel + "Fixtures/V2toV3.cdm")))
        try migrateSampleModel(with: mapping, root: root, store: second)
    }

    @Test(
        "objc.io's Moody store 1 migrates to model 6: inferred to 2, then through its four mapping models, found by the models"
    )
    func moodyLineage() throws {
        guard let root = Fixtures.root() else { return }
        // The app's bundle: the model versions and the mapping models side by side.
        let bundleFolder = directory.file("Moody.bundle")
        try FileManager.default.createDirectory(at: bundleFolder, withIntermediateDirectories: true)
        let lineage = root.appendingPathComponent(Self.moody)
        try FileManager.default.copyItem(
            at: lineage.appendingPathComponent("Moody.xcdatamodeld"),
            to: bundleFolder.appendingPathComponent("Moody.xcdatamodeld"))
        for file in try FileManager.default.contentsOfDirectory(atPath: lineage.appendingPathComponent("mappings").path)
        {
            try FileManager.default.copyItem(
                at: lineage.appendingPathComponent("mappings").appendingPathComponent(file),
                to: bundleFolder.appendingPathComponent(file))
        }
        let bundle = try #require(Bundle(path: bundleFolder.path))
        func version(_ n: Int) throws -> NSManagedObjectModel {
            let name = n == 1 ? "Moody.xcdatamodel" : "Moody \(n).xcdatamodel"
            return try #require(
                NSManagedObjectModel(contentsOf: bundleFolder.appendingPathComponent("Moody.xcdatamodeld/\(name)")))
        }
        var store = try FixtureStores.copy("objcio-moody-migrations/stores/Moody.moody", root: root, to: directory)
        // What store 1, the lineage's oldest, holds: each mood's date, its country's code and its
        // continent's code.
        let original = NSPersistentStoreCoordinator(managedObjectModel: try version(1))
        try original.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: store,
            options: [NSReadOnlyPersistentStoreOption: true])
        let reader = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        reader.persistentStoreCoordinator = original
        func summary(_ moods: [NSManagedObject]) -> [String] {
            moods.map { mood in
                let country = mood.value(forKey: "country") as? NSManagedObject
                let continent = country?.value(forKey: "continent") as? NSManagedObject
                return "\(mood.value(forKey: "date") ?? "-") "
                    + "\(country?.value(forKey: "numericISO3166Code") ?? "-") \(continent?.value(forKey: "numericISO3166Code") ?? "-")"
            }.sorted()
        }
        let expected = summary(try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Mood")))
        #expect(expected.count == 4)
        for step in 1...5 {
            let source = try version(step)
            let destination = try version(step + 1)
            // 1 → 2 has no mapping model (the app migrates it lightweight): an inferred one.
            let mapping =
                step == 1
                ? try NSMappingModel.inferredMappingModel(forSourceModel: source, destinationModel: destination)
                : try #require(
                    NSMappingModel(from: [bundle], forSourceModel: source, destinationModel: destination),
                    "no mapping model found for \(step) → \(step + 1)")
            #expect(
                mapping.entityMappings.allSatisfy { $0.sourceEntityName == nil || $0.sourceEntityVersionHash != nil })
            let next = directory.file("Moody-\(step + 1).sqlite")
            try NSMigrationManager(sourceModel: source, destinationModel: destination).migrateStore(
                from: store, sourceType: NSSQLiteStoreType, options: nil, with: mapping, toDestinationURL: next,
                destinationType: NSSQLiteStoreType, destinationOptions: nil)
            store = next
        }
        let final = NSPersistentStoreCoordinator(managedObjectModel: try version(6))
        try final.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: store)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = final
        #expect(summary(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Mood"))) == expected)
        let continents = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Continent"))
        let codes = continents.compactMap { ($0.value(forKey: "numericISO3166Code") as? NSNumber)?.intValue }
        #expect(codes.count == Set(codes).count)
        #expect(NSMappingModel(from: [bundle], forSourceModel: try version(1), destinationModel: try version(2)) == nil)
    }

    /// `migrateStore(from:…toDestinationURL:…)` leaves a finished store at the destination URL:
    /// NSMigrationManager reference, "migrates the store at a given source URL to the store at a
    /// given destination URL". Apps then move the migrated file into place (the documented
    /// pattern with `replacePersistentStore` aside, many move the main file alone), so the rows
    /// must be in the main file, not in a `-wal` beside it. Regression: every migrated row stayed
    /// in the destination's WAL, and moving the main file lost them all.
    @Test("a migrated SQLite destination holds its rows in its main file, with no WAL left beside it")
    func migratedDestinationIsCheckpointed() throws {
        let source = directory.file("Checkpoint.sqlite")
        let old = try sqliteStack(source)
        for n in 0..<50 { old.employee("E\(n)", salary: Double(n)) }
        try old.save()
        let sourceModel = try #require(old.persistentStoreCoordinator?.managedObjectModel)
        let destinationModel = CompanyModel.make()
        destinationModel.entitiesByName["Employee"]?.properties.append(
            CompanyModel.attribute("title", .stringAttributeType))
        let mapping = try NSMappingModel.inferredMappingModel(
            forSourceModel: sourceModel, destinationModel: destinationModel)
        let destination = directory.file("Migrated/Checkpoint.sqlite")
        try FileManager.default.createDirectory(
            at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
        // The manager stays alive, as an app's does (it keeps its destination context).
        let manager = NSMigrationManager(sourceModel: sourceModel, destinationModel: destinationModel)
        defer { withExtendedLifetime(manager) {} }
        try manager.migrateStore(
            from: source, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
            toDestinationURL: destination, destinationType: NSSQLiteStoreType, destinationOptions: nil)
        let wal = (try? FileManager.default.attributesOfItem(atPath: destination.path + "-wal")[.size] as? Int) ?? 0
        #expect(wal == 0, "the destination's WAL holds \(wal) bytes")
        // The main file alone, moved as an app moves it.
        let moved = directory.file("Moved.sqlite")
        try FileManager.default.copyItem(at: destination, to: moved)
        let reader = NSPersistentStoreCoordinator(managedObjectModel: destinationModel)
        try reader.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: moved,
            options: [NSReadOnlyPersistentStoreOption: true])
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = reader
        #expect(try context.count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 50)
    }

    /// NSMigrationManager `cancelMigrationWithError(_:)` cancels the migration with the given
    /// error. Called before `migrateStore` starts, that migration still ends with it (and writes
    /// nothing); the cancellation is spent, so the next migration runs. Regression: it was
    /// forgotten when the migration began.
    @Test("a migration cancelled before migrateStore starts fails with the given error and writes nothing")
    func cancelledBeforeItStarts() throws {
        let source = directory.file("Cancelled.sqlite")
        let old = try sqliteStack(source)
        old.employee("Ada")
        try old.save()
        let model = try #require(old.persistentStoreCoordinator?.managedObjectModel)
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: model, destinationModel: model)
        let manager = NSMigrationManager(sourceModel: model, destinationModel: model)
        defer { withExtendedLifetime(manager) {} }
        manager.cancelMigrationWithError(CocoaError(.userCancelled))
        let destination = directory.file("Cancelled-copy.sqlite")
        let error = #expect(throws: CocoaError.self) {
            try manager.migrateStore(
                from: source, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
                toDestinationURL: destination, destinationType: NSSQLiteStoreType, destinationOptions: nil)
        }
        #expect(error?.code == .userCancelled)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        try manager.migrateStore(
            from: source, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
            toDestinationURL: destination, destinationType: NSSQLiteStoreType, destinationOptions: nil)
        #expect(FileManager.default.fileExists(atPath: destination.path))
    }

    /// A mapping model written in code, as Apple's Core Data Model Versioning guide allows: the
    /// entity mapping's source expression in `NSExpression(format:)`'s `FETCH(…)` form (what Xcode
    /// compiles), and a value expression calling a selector of the app's `NSMigrationManager`
    /// subclass through `FUNCTION($manager, …)`. Regression: `FETCH` did not parse (a trap), and
    /// the manager's functions could not be overridden.
    @Test("a mapping model built in code: FETCH(…) in NSExpression(format:) and a subclass's FUNCTION($manager, …)")
    func mappingModelInCode() throws {
        final class ShoutingManager: NSMigrationManager, @unchecked Sendable {
            override func predicateFunction(_ selectorName: String, arguments: [Any?]) -> Any? {
                guard selectorName == "shout:" else {
                    return super.predicateFunction(selectorName, arguments: arguments)
                }
                return (arguments.first as? String)?.uppercased()
            }
        }
        let source = directory.file("InCode.sqlite")
        let old = try sqliteStack(source)
        for (name, salary) in [("Ada", 10.0), ("Bob", 1.0), ("Cy", 20.0)] { old.employee(name, salary: salary) }
        try old.save()
        let model = try #require(old.persistentStoreCoordinator?.managedObjectModel)
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: model, destinationModel: model)
        let employees = try #require(mapping.entityMappings.first { $0.sourceEntityName == "Employee" })
        let format =
            "FETCH(FUNCTION($manager, 'fetchRequestForSourceEntityNamed:predicateString:', 'Employee', 'salary > 5'), "
            + "$manager.sourceContext, NO)"
        employees.sourceExpression = NSExpression(format: format)
        #expect(employees.sourceExpression.map { NSExpression(format: $0.description) } == employees.sourceExpression)
        let name = try #require(employees.attributeMappings?.first { $0.name == "name" })
        name.valueExpression = NSExpression(format: "FUNCTION($manager, 'shout:', $source.name)")
        let destination = directory.file("InCode-copy.sqlite")
        let manager = ShoutingManager(sourceModel: model, destinationModel: model)
        defer { withExtendedLifetime(manager) {} }
        try manager.migrateStore(
            from: source, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
            toDestinationURL: destination, destinationType: NSSQLiteStoreType, destinationOptions: nil)
        let reader = try sqliteStack(destination, model: model)
        let names = try reader.fetch(NSFetchRequest<NSManagedObject>(entityName: "Employee"))
            .compactMap { $0.value(forKey: "name") as? String }.sorted()
        #expect(names == ["ADA", "CY"])
    }

    /// A value expression whose key path names a property the source entity lacks is found before
    /// the migration starts: `NSMigrationError` (134110) naming the key, the source store unchanged.
    @Test("a value expression naming a key the source entity lacks stops the migration before it starts")
    func unknownSourceKeyStopsBeforeStarting() throws {
        let source = directory.file("Lacks.sqlite")
        let old = try sqliteStack(source)
        old.employee("Ada", salary: 10)
        try old.save()
        let model = try #require(old.persistentStoreCoordinator?.managedObjectModel)
        let mapping = try NSMappingModel.inferredMappingModel(forSourceModel: model, destinationModel: model)
        let employees = try #require(mapping.entityMappings.first { $0.sourceEntityName == "Employee" })
        let name = try #require(employees.attributeMappings?.first { $0.name == "name" })
        name.valueExpression = NSExpression(format: "$source.shoeSize")
        let destination = directory.file("Lacks-copy.sqlite")
        let manager = NSMigrationManager(sourceModel: model, destinationModel: model)
        let before = try Data(contentsOf: source)
        let error = #expect(throws: NSError.self) {
            try manager.migrateStore(
                from: source, sourceType: NSSQLiteStoreType, options: nil, with: mapping,
                toDestinationURL: destination, destinationType: NSSQLiteStoreType, destinationOptions: nil)
        }
        #expect(error?.code == NSMigrationError)
        let reason = String(describing: error?.userInfo ?? [:])
        #expect(reason.contains("shoeSize"))
        #expect(try Data(contentsOf: source) == before)
        #expect(try sqliteStack(source).count(for: NSFetchRequest<NSManagedObject>(entityName: "Employee")) == 1)
    }
}
