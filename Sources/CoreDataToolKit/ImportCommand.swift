import ArgumentParser
import CoreData

/// `coredata import STORE --model MODEL FILE`: objects from an export file, in one transaction.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Add the objects of an export file to a store (created if missing), in one transaction.",
        discussion: """
            The file is what `coredata export` writes. Every object is checked against the model \
            and saved in one transaction: if anything is wrong, nothing is written (and a store \
            the import created is removed again).
            """)

    @Argument(help: "The store to import into (a SQLite file or a postgres:// URL); created when it does not exist.")
    var store: String
    @Option(help: "The model: a model file, or a store whose cached model to use.") var model: String
    @Argument(help: "The JSON file to import.") var file: String

    func run() throws {
        let input = try OpenedStore.existingFile(file)
        let document = try Self.readDocument(input)
        let loaded = try OpenedStore.modelFileOrCachedModel(model)
        let postgres = OpenedStore.isPostgres(store)
        let url = postgres ? try OpenedStore.existingFile(store) : URL(fileURLWithPath: store)
        let type = postgres ? PostgreSQLSupport.storeType : NSSQLiteStoreType
        let created =
            postgres
            ? (try? NSPersistentStoreCoordinator.metadataForPersistentStore(ofType: type, at: url, options: nil)) == nil
            : !FileManager.default.fileExists(atPath: url.path)
        let coordinator = NSPersistentStoreCoordinator(managedObjectModel: loaded)
        do {
            _ = try coordinator.addPersistentStore(ofType: type, configurationName: nil, at: url)
        } catch {
            throw ToolError.data("\(store): \(ToolError.describe(error))")
        }
        do {
            let count = try Self.insert(document, model: loaded, coordinator: coordinator, file: file)
            print("imported \(count) objects into \(store)")
        } catch {
            if created {
                for store in coordinator.persistentStores { try? coordinator.remove(store) }
                try? NSPersistentStoreCoordinator(managedObjectModel: loaded).destroyPersistentStore(
                    at: url, ofType: type, options: nil)
                // destroyPersistentStore empties a store's file; this one the import created, so it goes.
                if !postgres { try? FileManager.default.removeItem(at: url) }
            }
            throw error
        }
    }

    /// The `entities` object of an export file.
    static func readDocument(_ url: URL) throws -> [String: [[String: Any]]] {
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: try Data(contentsOf: url))
        } catch {
            throw ToolError.data("\(url.path): not JSON (\(ToolError.describe(error)))")
        }
        guard let document = json as? [String: Any], document["format"] as? String == ExportFormat.name else {
            throw ToolError.data("\(url.path): not a coredata export file (\"format\" is not \"\(ExportFormat.name)\")")
        }
        guard let version = document["version"] as? Int, version == ExportFormat.version else {
            throw ToolError.data("\(url.path): export format version \(document["version"] ?? "?") is not supported")
        }
        guard let entities = document["entities"] as? [String: [[String: Any]]] else {
            throw ToolError.data("\(url.path): \"entities\" must map entity names to arrays of objects")
        }
        return entities
    }

    /// Inserts every object, then sets relationships, then saves once; returns the object count.
    static func insert(
        _ entities: [String: [[String: Any]]], model: NSManagedObjectModel, coordinator: NSPersistentStoreCoordinator,
        file: String
    ) throws -> Int {
        let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
        context.persistentStoreCoordinator = coordinator
        func problem(_ where: String, _ message: String) -> ToolError { .data("\(file): \(`where`): \(message)") }

        var objects: [String: NSManagedObject] = [:]
        let total = entities.values.reduce(0) { $0 + $1.count }
        let progress = ProgressBar("importing", total: total * 2)
        var done = 0
        for name in entities.keys.sorted() {
            guard let entity = model.entitiesByName[name] else { throw problem(name, "no entity \(name) in the model") }
            guard !entity.isAbstract else { throw problem(name, "entity \(name) is abstract") }
            for (index, json) in (entities[name] ?? []).enumerated() {
                guard let id = json["@id"] as? String else { throw problem("\(name)[\(index)]", "no \"@id\"") }
                guard objects[id] == nil else { throw problem(id, "the @id appears twice") }
                let object = NSManagedObject(entity: entity, insertInto: context)
                objects[id] = object
                for (key, value) in json where key != "@id" {
                    guard let property = entity.propertiesByName[key] else {
                        throw problem(id, "no property '\(key)' in entity \(name)")
                    }
                    guard let attribute = property as? NSAttributeDescription else { continue }
                    do {
                        object.setValue(try ExportFormat.decode(value, attribute), forKey: key)
                    } catch let error as ImportProblem {
                        throw problem("\(id).\(key)", error.message)
                    }
                }
                done += 1
                progress.update(done)
            }
        }
        // To-ones first, then to-manys, whose order (for ordered relationships) is final.
        for pass in [false, true] {
            for name in entities.keys.sorted() {
                for json in entities[name] ?? [] {
                    guard let id = json["@id"] as? String, let object = objects[id] else { continue }
                    for (key, value) in json {
                        guard let relationship = object.entity.relationshipsByName[key],
                            relationship.isToMany == pass
                        else { continue }
                        try setRelationship(
                            relationship, of: object, id: id, to: value, objects: objects, problem: problem)
                    }
                    if pass {
                        done += 1
                        progress.update(done)
                    }
                }
            }
        }
        do {
            // Keys in file order, so exporting the imported store lists objects in the same order.
            var ordered: [NSManagedObject] = []
            for name in entities.keys.sorted() {
                for json in entities[name] ?? [] {
                    if let id = json["@id"] as? String, let object = objects[id] { ordered.append(object) }
                }
            }
            try context.obtainPermanentIDs(for: ordered)
            try context.save()
        } catch {
            progress.finish()
            throw ToolError.data("\(file): the objects do not satisfy the model: \(ToolError.describe(error))")
        }
        progress.finish()
        return objects.count
    }

    private static func setRelationship(
        _ relationship: NSRelationshipDescription, of object: NSManagedObject, id: String, to value: Any,
        objects: [String: NSManagedObject], problem: (String, String) -> ToolError
    ) throws {
        let place = "\(id).\(relationship.name)"
        func target(_ reference: Any) throws -> NSManagedObject {
            guard let reference = reference as? String else {
                throw problem(place, "expected an @id, found \(ExportFormat.describe(reference))")
            }
            guard let target = objects[reference] else { throw problem(place, "no object \(reference) in the file") }
            guard let destination = relationship.destinationEntity, target.entity.isKindOf(entity: destination) else {
                throw problem(place, "\(reference) is not a \(relationship.destinationEntity?.name ?? "?")")
            }
            return target
        }
        if !relationship.isToMany {
            object.setValue(value is NSNull ? nil : try target(value), forKey: relationship.name)
            return
        }
        guard let references = value as? [Any] else {
            throw problem(place, "expected an array of @ids, found \(ExportFormat.describe(value))")
        }
        let targets = try references.map(target)
        if relationship.isOrdered {
            object.setValue(NSOrderedSet(array: targets), forKey: relationship.name)
        } else {
            object.setValue(NSSet(array: targets), forKey: relationship.name)
        }
    }
}
