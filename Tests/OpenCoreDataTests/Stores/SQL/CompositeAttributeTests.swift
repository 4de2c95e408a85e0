import Foundation
import Testing

@testable import OpenCoreData
@testable import OpenCoreDataPostgres
@testable import OpenCoreDataSQL
@testable import OpenCoreDataSQLite

/// Composite attributes (`NSCompositeAttributeDescription`, iOS 17 / macOS 14).
///
/// Apple's documentation, `NSCompositeAttributeDescription`: "Model classes use dictionaries to
/// represent those composites in-memory, where each dictionary contains keys corresponding to the
/// names of the underlying attributes", "You can access a composite's underlying attributes using
/// namespaced key paths" (`magnitude.richter > 4.5`), and composites "can even nest". Apple's SQLite
/// store keeps each leaf element in a column of its own named after the leaf (FORMAT.md's naming
/// rule for every attribute: `Z` and the upper-cased name, numbered when the name is taken).
@Suite("Composite attributes")
struct CompositeAttributeTests {
    static var kinds: [String] { ["sqlite"] + (PostgresTestServer.runsTests ? ["postgres"] : []) }

    /// `Quake`: `place`, `name`, and `magnitude` = { `richter`, `name`, `source` = { `agency` } } —
    /// the leaf `magnitude.name` shares its name with the entity's own `name`.
    static func model(extraLeaf: Bool = false) -> NSManagedObjectModel {
        let source = NSCompositeAttributeDescription()
        source.name = "source"
        source.elements = [CompanyModel.attribute("agency", .stringAttributeType)]
        let magnitude = NSCompositeAttributeDescription()
        magnitude.name = "magnitude"
        magnitude.elements =
            [
                CompanyModel.attribute("richter", .doubleAttributeType),
                CompanyModel.attribute("name", .stringAttributeType), source,
            ] + (extraLeaf ? [CompanyModel.attribute("depth", .integer32AttributeType)] : [])
        let quake = NSEntityDescription()
        quake.name = "Quake"
        quake.properties = [
            CompanyModel.attribute("place", .stringAttributeType), CompanyModel.attribute("name", .stringAttributeType),
            magnitude,
        ]
        let model = NSManagedObjectModel()
        model.entities = [quake]
        return model
    }

    static func context(_ kind: String, _ directory: TemporaryDirectory, model: NSManagedObjectModel = model())
        throws -> (NSManagedObjectContext, URL)
    {
        let url =
            kind == "sqlite"
            ? directory.file("quakes.sqlite")
            : PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("quakes"))
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: kind == "sqlite" ? NSSQLiteStoreType : NSPostgreSQLStoreType, configurationName: nil, at: url,
            options: nil)
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return (context, url)
    }

    static func reopen(_ kind: String, _ url: URL, model: NSManagedObjectModel = model()) throws
        -> NSManagedObjectContext
    {
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
        try coordinator.addPersistentStore(
            ofType: kind == "sqlite" ? NSSQLiteStoreType : NSPostgreSQLStoreType, configurationName: nil, at: url,
            options: [NSMigratePersistentStoresAutomaticallyOption: true, NSInferMappingModelAutomaticallyOption: true]
        )
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        return context
    }

    static func insert(_ context: NSManagedObjectContext, place: String, richter: Double, agency: String?) {
        let quake = NSEntityDescription.insertNewObject(forEntityName: "Quake", into: context)
        quake.setValue(place, forKey: "place")
        quake.setValue("Q-\(place)", forKey: "name")
        var magnitude: [String: Any] = ["richter": richter, "name": "ML"]
        if let agency { magnitude["source"] = ["agency": agency] }
        quake.setValue(magnitude, forKey: "magnitude")
    }

    @Test(
        "A composite's value is a dictionary of its elements, nested composites nested, and survives a reopen",
        arguments: kinds)
    func roundTrip(kind: String) throws {
        let directory = TemporaryDirectory()
        let (context, url) = try Self.context(kind, directory)
        Self.insert(context, place: "Reykjanes", richter: 4.8, agency: "IMO")
        Self.insert(context, place: "Etna", richter: 3.1, agency: nil)
        try context.save()

        let reopened = try Self.reopen(kind, url)
        let request = NSFetchRequest<NSManagedObject>(entityName: "Quake")
        request.sortDescriptors = [NSSortDescriptor(key: "place", ascending: true)]
        let quakes = try reopened.fetch(request)
        try #require(quakes.count == 2)
        let etna = try #require(quakes[0].value(forKey: "magnitude") as? [String: Any])
        #expect(etna["richter"] as? Double == 3.1)
        #expect(etna["name"] as? String == "ML")
        #expect(etna["source"] == nil)
        let reykjanes = try #require(quakes[1].value(forKey: "magnitude") as? [String: Any])
        #expect((reykjanes["source"] as? [String: Any])?["agency"] as? String == "IMO")
        #expect(quakes[1].value(forKeyPath: "magnitude.source.agency") as? String == "IMO")
        #expect(quakes[1].value(forKey: "name") as? String == "Q-Reykjanes")
    }

    @Test("Each leaf has its own column, named after the leaf and numbered when the entity has the name")
    func columns() throws {
        let directory = TemporaryDirectory()
        let (context, url) = try Self.context("sqlite", directory)
        Self.insert(context, place: "Reykjanes", richter: 4.8, agency: "IMO")
        try context.save()
        let columns = try sqlite3(url, "SELECT name FROM pragma_table_info('ZQUAKE') ORDER BY name")
        #expect(Set(["ZRICHTER", "ZAGENCY", "ZNAME", "ZNAME1", "ZPLACE"]).isSubset(of: Set(columns)))
        #expect(!columns.contains("ZMAGNITUDE"))
        #expect(try sqlite3(url, "SELECT ZRICHTER, ZAGENCY FROM ZQUAKE") == ["4.8|IMO"])
    }

    @Test("A namespaced key path compares a leaf in SQL, with the answers of evaluation in memory", arguments: kinds)
    func predicates(kind: String) throws {
        let directory = TemporaryDirectory()
        let (context, _) = try Self.context(kind, directory)
        Self.insert(context, place: "Reykjanes", richter: 4.8, agency: "IMO")
        Self.insert(context, place: "Etna", richter: 3.1, agency: "INGV")
        Self.insert(context, place: "Hengill", richter: 5.2, agency: "IMO")
        try context.save()
        for (format, expected) in [
            ("magnitude.richter > 4.5", ["Hengill", "Reykjanes"]),
            ("magnitude.source.agency == 'IMO' AND magnitude.richter < 5", ["Reykjanes"]),
            ("magnitude.name == 'ML' AND name == 'Q-Etna'", ["Etna"]),
        ] {
            let request = NSFetchRequest<NSManagedObject>(entityName: "Quake")
            request.predicate = NSPredicate(format: format)
            request.sortDescriptors = [NSSortDescriptor(key: "magnitude.richter", ascending: true)]
            let places = try context.fetch(request).compactMap { $0.value(forKey: "place") as? String }
            #expect(places.sorted() == expected, "\(format)")
            let all = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Quake"))
            let inMemory = all.filter { request.predicate!.evaluate(with: $0) }.compactMap {
                $0.value(forKey: "place") as? String
            }
            #expect(inMemory.sorted() == expected, "\(format) in memory")
            if kind == "sqlite", let store = context.persistentStoreCoordinator?.persistentStores.first as? SQLiteStore
            {
                let entity = try #require(store.schema.model.entitiesByName["Quake"])
                let raw = NSFetchRequest<NSFetchRequestResult>(entityName: "Quake")
                raw.entity = entity
                raw.predicate = request.predicate
                raw.sortDescriptors = request.sortDescriptors
                let query = SQLQuery(
                    schema: store.schema, mapping: store.schema[entity], request: raw, dialect: SQLiteDialect())
                #expect(query.isComplete, "\(format) runs as one SQL statement")
            }
        }
        let sorted = NSFetchRequest<NSManagedObject>(entityName: "Quake")
        sorted.sortDescriptors = [NSSortDescriptor(key: "magnitude.richter", ascending: false)]
        #expect(
            try context.fetch(sorted).compactMap { $0.value(forKey: "place") as? String } == [
                "Hengill", "Reykjanes", "Etna",
            ])
    }

    @Test("setValue(_:forKeyPath:) sets one element and keeps the others; the change is saved")
    func namespacedSet() throws {
        let directory = TemporaryDirectory()
        let (context, url) = try Self.context("sqlite", directory)
        Self.insert(context, place: "Etna", richter: 3.1, agency: "INGV")
        try context.save()
        let quake = try #require(try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Quake")).first)
        quake.setValue(3.4, forKeyPath: "magnitude.richter")
        quake.setValue("EMSC", forKeyPath: "magnitude.source.agency")
        #expect(quake.changedValues().keys.contains("magnitude"))
        try context.save()
        #expect(try sqlite3(url, "SELECT ZRICHTER, ZNAME1, ZAGENCY FROM ZQUAKE") == ["3.4|ML|EMSC"])
    }

    @Test("A composite is archived with its elements (NSCompositeElements), and hashes as its leaves")
    func compiledModelAndHash() throws {
        let model = Self.model()
        let decoded = try CompiledModelDecoder.model(from: CompiledModelEncoder.archive(model))
        let composite = try #require(
            decoded.entitiesByName["Quake"]?.attributesByName["magnitude"] as? NSCompositeAttributeDescription)
        #expect(composite.elements.map(\.name) == ["richter", "name", "source"])
        #expect((composite.elements[2] as? NSCompositeAttributeDescription)?.elements.map(\.name) == ["agency"])
        #expect(decoded.entityVersionHashesByName == model.entityVersionHashesByName)

        // Apple hashes a composite as its leaves in name order, nested composites flattened: the
        // same leaves under another nesting hash alike, and a leaf's change changes the hash.
        let flat = NSCompositeAttributeDescription()
        flat.name = "magnitude"
        flat.elements = [
            CompanyModel.attribute("richter", .doubleAttributeType),
            CompanyModel.attribute("name", .stringAttributeType),
            CompanyModel.attribute("agency", .stringAttributeType),
        ]
        let magnitude = try #require(model.entitiesByName["Quake"]?.attributesByName["magnitude"])
        #expect(flat.versionHash == magnitude.versionHash)
        flat.elements = [
            CompanyModel.attribute("richter", .floatAttributeType),
            CompanyModel.attribute("name", .stringAttributeType),
            CompanyModel.attribute("agency", .stringAttributeType),
        ]
        #expect(flat.versionHash != magnitude.versionHash)
    }

    @Test("An Xcode model declares a composite once and entities' attributes name it")
    func xcodeModel() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("Quakes.xcdatamodel")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic" sourceLanguage="Swift">
            <entity name="Quake" representedClassName="Quake" syncable="YES">
                <attribute name="magnitude" optional="YES" attributeType="Composite" composite="Magnitude"/>
                <attribute name="place" optional="YES" attributeType="String"/>
            </entity>
            <compositeAttribute name="Magnitude">
                <attribute name="richter" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                <attribute name="scale" optional="YES" attributeType="String"/>
            </compositeAttribute>
        </model>
        """.write(to: url.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let model = try #require(NSManagedObjectModel(contentsOf: url))
        let composite = try #require(
            model.entitiesByName["Quake"]?.attributesByName["magnitude"] as? NSCompositeAttributeDescription)
        #expect(composite.attributeType == .compositeAttributeType)
        #expect(composite.elements.map(\.name) == ["richter", "scale"])
        #expect(composite.elements.map(\.attributeType) == [.doubleAttributeType, .stringAttributeType])

        try """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
            <entity name="Quake" syncable="YES">
                <attribute name="magnitude" optional="YES" attributeType="Composite" composite="Missing"/>
            </entity>
        </model>
        """.write(to: url.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let error = #expect(throws: NSError.self) { try NSManagedObjectModel(validatingContentsOf: url) }
        #expect(error?.code == NSFileReadCorruptFileError)
    }

    @Test("A lightweight migration that adds an element keeps the values of the others", arguments: kinds)
    func migrationAddsAnElement(kind: String) throws {
        let directory = TemporaryDirectory()
        let (context, url) = try Self.context(kind, directory)
        Self.insert(context, place: "Etna", richter: 3.1, agency: "INGV")
        try context.save()
        let migrated = try Self.reopen(kind, url, model: Self.model(extraLeaf: true))
        let quake = try #require(try migrated.fetch(NSFetchRequest<NSManagedObject>(entityName: "Quake")).first)
        #expect(quake.value(forKeyPath: "magnitude.richter") as? Double == 3.1)
        #expect(quake.value(forKeyPath: "magnitude.source.agency") as? String == "INGV")
        #expect(quake.value(forKeyPath: "magnitude.depth") == nil)
    }
}

extension CompositeAttributeTests {
    @Test(
        "The XML and binary stores refuse a model with a composite (134020) rather than lose its values",
        arguments: [NSXMLStoreType, NSBinaryStoreType])
    func atomicStoresRefuse(type: String) throws {
        let directory = TemporaryDirectory()
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: Self.model())
        let error = #expect(throws: NSError.self) {
            try coordinator.addPersistentStore(
                ofType: type, configurationName: nil, at: directory.file("quakes.store"), options: nil)
        }
        #expect(error?.code == NSPersistentStoreIncompatibleSchemaError)
        #expect(error?.localizedDescription.contains("Quake.magnitude") == true)
    }
}

extension CompositeAttributeTests {
    /// Apple's documentation: composites can be indexed and constrained, by the namespaced key path
    /// of an element. A fetch index and a uniqueness constraint naming a leaf are indexes on the
    /// leaf's column; a second object with a constrained value already stored is a constraint
    /// conflict, found before anything is written: the default merge policy fails the save with
    /// `NSManagedObjectConstraintMergeError` (NSMergePolicy reference), and the object-trump policy
    /// makes it an update of the stored row.
    @Test("A fetch index and a uniqueness constraint may name a leaf by its namespaced key path")
    func indexesAndConstraintsOnALeaf() throws {
        let model = Self.model()
        let quake = try #require(model.entitiesByName["Quake"])
        quake.uniquenessConstraints = [["magnitude.source.agency", "place"]]
        quake.indexes = [
            NSFetchIndexDescription(
                name: "byRichter",
                elements: [
                    NSFetchIndexElementDescription(
                        propertyName: "magnitude.richter", ascending: true, collationType: .binary)
                ])
        ]
        let directory = TemporaryDirectory()
        let (context, url) = try Self.context("sqlite", directory, model: model)
        Self.insert(context, place: "Etna", richter: 3.1, agency: "INGV")
        try context.save()
        let indexes = try sqlite3(url, "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = 'ZQUAKE'")
        #expect(indexes.contains { $0.contains("Z_Quake_byRichter") && $0.contains("ZRICHTER") })
        #expect(indexes.contains { $0.contains("UNIQUE") && $0.contains("ZAGENCY") && $0.contains("ZPLACE") })

        let other = try Self.reopen("sqlite", url, model: model)
        Self.insert(other, place: "Etna", richter: 4.0, agency: "INGV")
        let error = #expect(throws: NSError.self) { try other.save() }
        #expect(error?.domain == NSCocoaErrorDomain)
        #expect(error?.code == NSManagedObjectConstraintMergeError)
        #expect(try sqlite3(url, "SELECT count(*) FROM ZQUAKE") == ["1"])

        other.mergePolicy = NSMergePolicy.mergeByPropertyObjectTrump
        try other.save()
        #expect(try sqlite3(url, "SELECT count(*), ZRICHTER FROM ZQUAKE") == ["1|4.0"])
    }
}

extension CompositeAttributeTests {
    /// `NSBatchInsertRequest` into an entity whose uniqueness constraint names a composite's
    /// leaf (NSBatchInsertRequest reference: with uniqueness constraints, an object whose
    /// constrained values are stored updates the stored object): objects that differ in the leaf
    /// are both inserted, never merged on the other names alone; an object with the same leaf and
    /// place, in the same request or a later one, updates the stored object.
    @Test("A batch insert matches a constrained leaf: different leaves insert, the same leaf updates")
    func batchInsertWithALeafConstraint() throws {
        let model = Self.model()
        let quake = try #require(model.entitiesByName["Quake"])
        quake.uniquenessConstraints = [["magnitude.source.agency", "place"]]
        let directory = TemporaryDirectory()
        let (context, url) = try Self.context("sqlite", directory, model: model)
        func row(_ agency: String, _ richter: Double) -> [String: Any] {
            ["place": "Etna", "name": "Q", "magnitude": ["richter": richter, "source": ["agency": agency]]]
        }
        let request = NSBatchInsertRequest(
            entityName: "Quake", objects: [row("INGV", 3.0), row("EMSC", 3.1), row("INGV", 3.2)])
        _ = try context.execute(request)
        #expect(try sqlite3(url, "SELECT ZAGENCY, ZRICHTER FROM ZQUAKE ORDER BY ZAGENCY") == ["EMSC|3.1", "INGV|3.2"])
        _ = try context.execute(NSBatchInsertRequest(entityName: "Quake", objects: [row("INGV", 4.0)]))
        #expect(try sqlite3(url, "SELECT ZAGENCY, ZRICHTER FROM ZQUAKE ORDER BY ZAGENCY") == ["EMSC|3.1", "INGV|4.0"])
    }
}
