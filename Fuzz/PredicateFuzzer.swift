import OpenCoreData

/// libFuzzer entry point: any bytes, read as a UTF-8 format string, must parse or be rejected
/// with an error — never crash, hang or overflow the stack. A format that parses must print to
/// a format that parses back to an equal predicate, must evaluate without crashing, and must run
/// as a fetch against an SQLite store (as SQL, or in memory where SQL cannot express it) with
/// an answer or an error.
@_cdecl("LLVMFuzzerTestOneInput")
public func predicateFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let format = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    let arguments: [Any] = ["name", 7, 2.5, [1, 2, 3], "a*", NSNull()]
    guard let predicate = try? NSPredicate(validatingFormat: format, argumentArray: arguments) else { return 0 }
    let printed = predicate.predicateFormat
    let reparsed: OpenCoreData.NSPredicate
    do {
        reparsed = try NSPredicate(validatingFormat: printed, argumentArray: nil)
    } catch let error as NSPredicateFormatError where error.code == .nestingTooDeep {
        // The printed form adds the parentheses precedence needs, so a predicate nested close to
        // the cap can print deeper than the cap (DEVIATIONS.md).
        return 0
    } catch {
        fatalError("printed form does not parse\n  input:   \(format)\n  printed: \(printed)\n  \(error)")
    }
    if reparsed != predicate {
        fatalError("printed form parses to a different predicate\n  input:   \(format)\n  printed: \(printed)")
    }
    let object: [String: Any] = [
        "name": "Ada", "age": 36, "tags": ["a", "b"], "friends": [["name": "Bo", "age": 3]],
        "address": ["city": "London"], "born": Date(timeIntervalSinceReferenceDate: 0),
    ]
    _ = predicate.evaluate(with: object, substitutionVariables: ["x": 1, "LIST": [1, 2]])
    let request = NSFetchRequest<NSManagedObject>(entityName: "Person")
    request.predicate = predicate
    _ = try? storeContext.fetch(request)
    return 0
}

/// An SQLite store in memory (`/dev/null`) holding a few people, made once per process.
nonisolated(unsafe) let storeContext: NSManagedObjectContext = {
    func attribute(_ name: String, _ type: NSAttributeType) -> NSAttributeDescription {
        let attribute = NSAttributeDescription()
        attribute.name = name
        attribute.attributeType = type
        attribute.isOptional = true
        return attribute
    }
    let person = NSEntityDescription()
    person.name = "Person"
    let friends = NSRelationshipDescription()
    friends.name = "friends"
    friends.maxCount = 0
    friends.destinationEntity = person
    let boss = NSRelationshipDescription()
    boss.name = "boss"
    boss.maxCount = 1
    boss.destinationEntity = person
    person.properties = [
        attribute("name", .stringAttributeType), attribute("age", .integer64AttributeType),
        attribute("score", .doubleAttributeType), attribute("active", .booleanAttributeType),
        attribute("born", .dateAttributeType), attribute("small", .integer16AttributeType),
        attribute("price", .decimalAttributeType), attribute("data", .binaryDataAttributeType), friends, boss,
    ]
    let model = NSManagedObjectModel()
    model.entities = [person]
    let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
    do {
        _ = try coordinator.addPersistentStore(
            ofType: NSSQLiteStoreType, configurationName: nil, at: URL(fileURLWithPath: "/dev/null"), options: nil)
    } catch {
        fatalError("cannot open the fuzzer's store: \(error)")
    }
    let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
    context.persistentStoreCoordinator = coordinator
    var people: [NSManagedObject] = []
    for (index, name) in ["Ada", "bo", "Émile", "", "a*b"].enumerated() {
        let object = NSEntityDescription.insertNewObject(forEntityName: "Person", into: context)
        object.setValue(name, forKey: "name")
        object.setValue(Int64(index * 7 - 3), forKey: "age")
        object.setValue(Double(index) / 3, forKey: "score")
        object.setValue(index % 2 == 0, forKey: "active")
        object.setValue(Date(timeIntervalSinceReferenceDate: Double(index) * 1e6), forKey: "born")
        object.setValue(Int16(index), forKey: "small")
        object.setValue(Decimal(index) / 4, forKey: "price")
        object.setValue(Data([UInt8(index)]), forKey: "data")
        if let first = people.first { object.setValue(first, forKey: "boss") }
        object.setValue(Set(people), forKey: "friends")
        people.append(object)
    }
    do { try context.save() } catch { fatalError("cannot fill the fuzzer's store: \(error)") }
    return context
}()
