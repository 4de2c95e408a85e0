/// Mapping models from files: compiled ones (`.cdm`, keyed archives of `NSMappingModel`, as Xcode
/// compiles them and Apple's Core Data loads them) and Xcode's sources (`.xcmappingmodel`, an XML
/// store of Xcode's mapping editor — SwiftPM has no mapping compiler, so they are read as they
/// are). STORE-FORMAT.md, "Mapping-model files".
extension NSMappingModel {
    /// The mapping model in the file at `url`: a compiled `.cdm`, or an `.xcmappingmodel` folder
    /// (or its `xcmapping.xml`). `nil`, as Apple's initializer gives, when there is no such file or
    /// it is not a mapping model.
    public convenience init?(contentsOf url: URL?) {
        guard let url, let mappings = try? Self.mappingModel(contentsOf: url).entityMappings else { return nil }
        self.init()
        entityMappings = mappings
    }

    /// The mapping model among those `bundles` ship (the main bundle when `nil`) that maps
    /// `sourceModel` to `destinationModel`: a `.cdm` whose entity mappings record the two models'
    /// entity version hashes, or an `.xcmappingmodel` whose source and destination model versions
    /// (found among the bundles' `.xcdatamodeld` files by the names the mapping file records) have
    /// the two models' hashes. `nil` when none does.
    public convenience init?(
        from bundles: [Bundle]?, forSourceModel sourceModel: NSManagedObjectModel?,
        destinationModel: NSManagedObjectModel?
    ) {
        guard let sourceModel, let destinationModel,
            let found = Self.find(in: bundles ?? [Bundle.main], source: sourceModel, destination: destinationModel)
        else { return nil }
        self.init()
        entityMappings = found.entityMappings
    }

    /// The mapping model in the file at `url`.
    ///
    /// - Throws: `NSFileReadNoSuchFileError` (260) when there is no file, `NSFileReadCorruptFileError`
    ///   (259) with the reason when it is not a mapping model.
    package static func mappingModel(contentsOf url: URL) throws -> NSMappingModel {
        let isSource = url.pathExtension == "xcmappingmodel" || url.lastPathComponent == "xcmapping.xml"
        let file = url.pathExtension == "xcmappingmodel" ? url.appendingPathComponent("xcmapping.xml") : url
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            throw CoreDataError.make(
                CocoaError.Code.fileReadNoSuchFile.rawValue, "There is no mapping model at \(url.path).",
                [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
        let model = NSMappingModel()
        do {
            if isSource {
                let source = try XcodeMappingSource(data)
                let models = source.models(near: file)
                model.entityMappings = try source.entityMappings(
                    source: models?.source, destination: models?.destination)
            } else {
                model.entityMappings = try compiled(data)
            }
        } catch let problem as ModelProblem {
            throw CoreDataError.make(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                "The file at \(url.path) is not a mapping model: it \(problem.message).",
                [NSURLErrorKey: url, "reason": problem.message])
        } catch let problem as StoreFileProblem {
            throw CoreDataError.make(
                CocoaError.Code.fileReadCorruptFile.rawValue,
                "The file at \(url.path) is not a mapping model: it \(problem.message).",
                [NSURLErrorKey: url, "reason": problem.message])
        }
        return model
    }

    /// The entity mappings of a compiled mapping model (`NSMappingModel`'s keyed archive:
    /// `NSEntityMappings`, each with `NSMappingName`, `NSMappingType`, the entity names and version
    /// hashes, `NSSourceExpression`, `NSEntityMigrationPolicyClassName`, `NSUserInfo` and its
    /// `NSAttributeMappings` and `NSRelationshipMappings` — `NSDestinationPropertyName`,
    /// `NSValueExpression`, `NSUserInfo`).
    static func compiled(_ data: Data) throws -> [NSEntityMapping] {
        let archive = try KeyedArchive(data: data)
        guard let root = archive.objects[archive.root] as? [String: Any],
            archive.className(root) == "NSMappingModel"
        else { throw ModelProblem(message: "is not an archived NSMappingModel") }
        func propertyMappings(_ reference: Any?) throws -> [NSPropertyMapping] {
            try archive.elements(reference).compactMap { element in
                guard let object = archive.dictionary(element) else { return nil }
                let mapping = NSPropertyMapping()
                mapping.name = archive.string(object["NSDestinationPropertyName"])
                mapping.valueExpression = try archive.expression(object["NSValueExpression"])
                mapping.userInfo = try archive.value(object["NSUserInfo"]) as? [String: Any]
                return mapping
            }
        }
        return try archive.elements(root["NSEntityMappings"]).compactMap { element in
            guard let object = archive.dictionary(element) else { return nil }
            let mapping = NSEntityMapping()
            mapping.name = archive.string(object["NSMappingName"])
            mapping.mappingType =
                NSEntityMappingType(rawValue: UInt((object["NSMappingType"] as? Int) ?? 0))
                ?? .undefinedEntityMappingType
            mapping.sourceEntityName = archive.string(object["NSSourceEntityName"])
            mapping.destinationEntityName = archive.string(object["NSDestinationEntityName"])
            mapping.sourceEntityVersionHash = try archive.value(object["NSSourceEntityVersionHash"]) as? Data
            mapping.destinationEntityVersionHash = try archive.value(object["NSDestinationEntityVersionHash"]) as? Data
            mapping.sourceExpression = try archive.expression(object["NSSourceExpression"])
            mapping.entityMigrationPolicyClassName = archive.string(object["NSEntityMigrationPolicyClassName"])
            mapping.userInfo = try archive.value(object["NSUserInfo"]) as? [String: Any]
            mapping.attributeMappings = try propertyMappings(object["NSAttributeMappings"])
            mapping.relationshipMappings = try propertyMappings(object["NSRelationshipMappings"])
            return mapping
        }
    }

    /// The mapping file among `bundles` that maps `source` to `destination`.
    private static func find(
        in bundles: [Bundle], source: NSManagedObjectModel, destination: NSManagedObjectModel
    ) -> NSMappingModel? {
        let sourceHashes = source.entityVersionHashesByName
        let destinationHashes = destination.entityVersionHashesByName
        for file in ModelVersions.mappingModelFiles(in: bundles) {
            if file.pathExtension == "cdm" {
                guard let model = try? mappingModel(contentsOf: file) else { continue }
                let matches = model.entityMappings.allSatisfy { mapping in
                    (mapping.sourceEntityName.map { sourceHashes[$0] == mapping.sourceEntityVersionHash } ?? true)
                        && (mapping.destinationEntityName.map {
                            destinationHashes[$0] == mapping.destinationEntityVersionHash
                        } ?? true)
                }
                if matches, !model.entityMappings.isEmpty { return model }
                continue
            }
            guard let data = try? Data(contentsOf: file.appendingPathComponent("xcmapping.xml")),
                let mapping = try? XcodeMappingSource(data),
                let (sourceName, destinationName) = mapping.modelVersionNames
            else { continue }
            let versions = ModelVersions.files(in: bundles).flatMap(ModelVersions.versions(of:))
            func version(named name: String, hashes: [String: Data]) -> NSManagedObjectModel? {
                versions.lazy.filter { $0.lastPathComponent == name }.compactMap {
                    NSManagedObjectModel(contentsOf: $0)
                }
                .first { $0.entityVersionHashesByName == hashes }
            }
            guard version(named: sourceName, hashes: sourceHashes) != nil,
                version(named: destinationName, hashes: destinationHashes) != nil,
                let mappings = try? mapping.entityMappings(source: source, destination: destination)
            else { continue }
            let model = NSMappingModel()
            model.entityMappings = mappings
            return model
        }
        return nil
    }
}

/// Xcode's `xcmapping.xml`, read as the XML store it is (``XcodeMappingFile``), turned into entity
/// mappings as Xcode's mapping compiler would: in `mappingNumber` order, named
/// `<Source>To<Destination>`, with the expressions Xcode generates where the file says
/// `autoGenerateExpression` — `$source.<name>` for an attribute;
/// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", <mapping>,
/// $source.<key path>)` for a relationship; a `FETCH` of every source instance (through the
/// filter predicate, if any) for an entity mapping.
struct XcodeMappingSource {
    private let image: StoreImage
    private let objects: [Int64: StoreImage.Object]

    init(_ data: Data) throws {
        image = try XMLStoreFormat.decode(data, model: XcodeMappingFile.model)
        try image.validate()
        objects = Dictionary(image.objects.map { ($0.reference, $0) }, uniquingKeysWith: { first, _ in first })
    }

    private func value(_ object: StoreImage.Object, _ name: String) -> Any? {
        object.entity.layout.slotByName[name].flatMap { object.values[$0] }
    }

    private func related(_ object: StoreImage.Object, _ name: String) -> [StoreImage.Object] {
        (value(object, name) as? [Int64] ?? []).compactMap { objects[$0] }
    }

    private var mappingModel: StoreImage.Object? {
        image.objects.first { $0.entity.name == "XDDevMappingModel" }
    }

    /// The file names of the source and destination model versions
    /// (`Moody.xcdatamodeld/Moody 2.xcdatamodel` → `Moody 2.xcdatamodel`).
    var modelVersionNames: (String, String)? {
        guard let model = mappingModel, let source = value(model, "sourceModelPath") as? String,
            let destination = value(model, "destinationModelPath") as? String
        else { return nil }
        return ((source as NSString).lastPathComponent, (destination as NSString).lastPathComponent)
    }

    /// The source and destination models the file names (`sourceModelPath`, relative to the
    /// Xcode project), found beside the mapping file or in a folder above it; `nil` when either
    /// is not found.
    func models(near file: URL) -> (source: NSManagedObjectModel, destination: NSManagedObjectModel)? {
        guard let model = mappingModel, let sourcePath = value(model, "sourceModelPath") as? String,
            let destinationPath = value(model, "destinationModelPath") as? String
        else { return nil }
        func find(_ path: String) -> NSManagedObjectModel? {
            let components = path.split(separator: "/").map(String.init)
            var folder = file.deletingLastPathComponent()
            for _ in 0..<5 {
                for start in components.indices {
                    let candidate = components[start...].reduce(folder) { $0.appendingPathComponent($1) }
                    if FileManager.default.fileExists(atPath: candidate.path),
                        let model = NSManagedObjectModel(contentsOf: candidate)
                    {
                        return model
                    }
                }
                folder = folder.deletingLastPathComponent()
            }
            return nil
        }
        guard let source = find(sourcePath), let destination = find(destinationPath) else { return nil }
        return (source, destination)
    }

    /// The entity mappings; with the two models, autogenerated expressions are made only for
    /// properties the source entity has (a relationship's from the entity mapping between the two
    /// relationships' destinations, as Xcode's compiler chooses it), and the version hashes are
    /// filled in.
    func entityMappings(source: NSManagedObjectModel? = nil, destination: NSManagedObjectModel? = nil) throws
        -> [NSEntityMapping]
    {
        guard let model = mappingModel else { throw StoreFileProblem("holds no XDDevMappingModel") }
        let entities = related(model, "entityMappings").sorted {
            ((value($0, "mappingNumber") as? Int) ?? 0, $0.reference) < (
                (value($1, "mappingNumber") as? Int) ?? 0, $1.reference
            )
        }
        func names(_ object: StoreImage.Object) -> (String?, String?) {
            (
                (value(object, "sourceName") as? String).flatMap { $0.isEmpty ? nil : $0 },
                (value(object, "destinationName") as? String).flatMap { $0.isEmpty ? nil : $0 }
            )
        }
        let pairs = entities.map(names)
        return try entities.map { object in
            let mapping = NSEntityMapping()
            let (sourceName, destinationName) = names(object)
            mapping.sourceEntityName = sourceName
            mapping.destinationEntityName = destinationName
            // Xcode's compiler: `<Source>To<Destination>`, or the one entity's name alone.
            mapping.name =
                sourceName.flatMap { source in destinationName.map { "\(source)To\($0)" } } ?? destinationName
                ?? sourceName
            let sourceEntity = sourceName.flatMap { source?.entitiesByName[$0] }
            mapping.sourceEntityVersionHash = sourceEntity?.versionHash
            mapping.destinationEntityVersionHash = destinationName.flatMap {
                destination?.entitiesByName[$0]?.versionHash
            }
            if let policy = value(object, "migrationPolicyClassName") as? String, !policy.isEmpty {
                mapping.entityMigrationPolicyClassName = policy
            }
            mapping.mappingType = Self.type(
                value(object, "mappingTypeName") as? String, source: sourceName, destination: destinationName,
                custom: mapping.entityMigrationPolicyClassName != nil)
            if let sourceName, mapping.mappingType != .removeEntityMappingType {
                let filter = (value(object, "sourceFilterPredicateString") as? String).flatMap { $0.isEmpty ? nil : $0 }
                mapping.sourceExpression =
                    try Self.archivedExpression(value(object, "sourceExpressionData"))
                    ?? MappingInference.sourceFetch(sourceName, predicate: filter ?? "TRUEPREDICATE")
            }
            mapping.attributeMappings = try related(object, "attributeMappings").map { property in
                let name = value(property, "name") as? String
                let generated: NSExpression? =
                    name.flatMap { name in
                        guard sourceName != nil, source == nil || sourceEntity?.attributesByName[name] != nil else {
                            return nil
                        }
                        return NSExpression(format: "$source.%K", name)
                    }
                // Attribute mappings are generated unless they carry an expression of their own.
                return try Self.propertyMapping(property, name: name, generated: generated, always: true, reader: self)
            }.sorted { ($0.name ?? "") < ($1.name ?? "") }
            mapping.relationshipMappings = try related(object, "relationshipMappings").map { property in
                let name = value(property, "name") as? String
                var generated: NSExpression?
                var explicit = false
                if let keyPath = (value(property, "sourceKeyPath") as? String).flatMap({ $0.isEmpty ? nil : $0 }),
                    let target = (value(property, "sourceMappingName") as? String).flatMap({ $0.isEmpty ? nil : $0 })
                {
                    generated = try Self.destinationInstances(target, sourceKeyPath: keyPath)
                    explicit = true
                } else if let name, let from = sourceEntity?.relationshipsByName[name]?.destinationEntity,
                    let to = destinationName.flatMap({ destination?.entitiesByName[$0]?.relationshipsByName[name] })?
                        .destinationEntity?.name
                {
                    // Destinations of a hierarchy come from several entity mappings: Xcode's
                    // compiler then asks by the source relationship.
                    if !from.subentities.isEmpty {
                        generated = NSExpression(
                            format:
                                "FUNCTION($manager, 'destinationInstancesForSourceRelationshipNamed:sourceInstances:', %@, $source.%K)",
                            name, name)
                    } else if pairs.contains(where: { $0.0 == from.name && $0.1 == to }) {
                        generated = try Self.destinationInstances("\(from.name ?? "")To\(to)", sourceKeyPath: name)
                    }
                }
                return try Self.propertyMapping(
                    property, name: name, generated: generated, always: explicit, reader: self)
            }.sorted { ($0.name ?? "") < ($1.name ?? "") }
            return mapping
        }
    }

    /// `FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", mapping,
    /// keyPath)`; the file's key path is an expression (`$source.country.continent`), a bare one is
    /// taken from `$source`.
    ///
    /// - Throws: ``ModelProblem`` when the key path does not parse.
    private static func destinationInstances(_ mapping: String, sourceKeyPath keyPath: String) throws -> NSExpression {
        let text = keyPath.hasPrefix("$") ? keyPath : "$source." + keyPath
        let argument: NSExpression
        do {
            argument = try PredicateParser.parseExpression(text, arguments: [])
        } catch {
            throw ModelProblem(message: "has the source key path \"\(keyPath)\", which is not an expression")
        }
        return NSExpression(
            forFunction: NSExpression(forVariable: "manager"),
            selectorName: "destinationInstancesForEntityMappingNamed:sourceInstances:",
            arguments: [NSExpression(forConstantValue: mapping), argument])
    }

    /// A property mapping: its archived expression when it has one, else the generated one when
    /// the file says to generate it (or `always`).
    private static func propertyMapping(
        _ object: StoreImage.Object, name: String?, generated: NSExpression?, always: Bool, reader: XcodeMappingSource
    ) throws -> NSPropertyMapping {
        let mapping = NSPropertyMapping()
        mapping.name = name
        if let archived = try archivedExpression(reader.value(object, "valueExpressionData")) {
            mapping.valueExpression = archived
        } else if always || reader.value(object, "autoGenerateExpression") as? Bool == true {
            mapping.valueExpression = generated
        }
        return mapping
    }

    private static func archivedExpression(_ value: Any?) throws -> NSExpression? {
        guard let data = value as? Data, !data.isEmpty else { return nil }
        return try KeyedArchive(data: data).rootExpression()
    }

    /// Xcode's mapping type names; `Undefined` is decided as Xcode's compiler decides it.
    private static func type(_ name: String?, source: String?, destination: String?, custom: Bool)
        -> NSEntityMappingType
    {
        switch name {
        case "Custom": return .customEntityMappingType
        case "Add": return .addEntityMappingType
        case "Remove": return .removeEntityMappingType
        case "Copy": return .copyEntityMappingType
        case "Transform": return .transformEntityMappingType
        default:
            if source == nil { return .addEntityMappingType }
            if destination == nil { return .removeEntityMappingType }
            return custom ? .customEntityMappingType : .copyEntityMappingType
        }
    }
}
