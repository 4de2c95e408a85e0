/// Compiled mapping models (`.cdm`) and the `VersionInfo.plist` of a compiled model folder
/// (`.momd`), as Xcode's compilers write them (STORE-FORMAT.md, "Compiled models and mapping
/// models"), so that a Linux build gives a bundle the files Apple's Core Data looks for.
extension CompiledModelEncoder {
    /// The `NSKeyedArchiver` archive of `mapping`: its entity mappings in order and by name, each
    /// with its entities' names and version hashes, kind, source expression, policy class,
    /// `userInfo` and property mappings.
    ///
    /// - Throws: ``ModelProblem`` naming the entity mapping and property whose expression is of a
    ///   kind no mapping file holds (a subquery, a block, a set operation).
    package static func archive(_ mapping: NSMappingModel) throws -> Data {
        var encoder = CompiledModelEncoder()
        let root = encoder.reserve()
        var archived: [(String?, PropertyListValue)] = []
        for entityMapping in mapping.entityMappings {
            archived.append((entityMapping.name, try encoder.encode(entityMapping)))
        }
        let byName = archived.compactMap { name, value in name.map { ($0, value) } }
        encoder.object(
            ["NSMappingModel", "NSObject"],
            [
                ("NSEntityMappings", encoder.array(archived.map(\.1))),
                ("NSEntityMappingsByName", encoder.dictionary(byName, Self.mutableDictionaryChain)),
            ], at: root)
        return encoder.archiveData(root: .uid(root))
    }

    /// The binary property list Xcode writes as a `.momd` folder's `VersionInfo.plist`: the
    /// current version's name and every version's entity version hashes.
    package static func versionInfo(current: String, versionHashes: [String: [String: Data]]) -> Data {
        let versions = versionHashes.sorted { $0.key < $1.key }.map { version, hashes in
            (version, PropertyListValue.dictionary(hashes.sorted { $0.key < $1.key }.map { ($0.key, .data($0.value)) }))
        }
        return BinaryPropertyListWriter.data(
            .dictionary([
                ("NSManagedObjectModel_CurrentVersionName", .string(current)),
                ("NSManagedObjectModel_VersionHashes", .dictionary(versions)),
            ]))
    }

    private mutating func encode(_ mapping: NSEntityMapping) throws -> PropertyListValue {
        let index = reserve()
        func archived(_ expression: NSExpression?, _ what: String) throws -> PropertyListValue {
            guard let expression else { return .uid(0) }
            guard let value = self.expression(expression, style: .mapping) else {
                throw ModelProblem(
                    message:
                        "has the \(what) \(expression) in the entity mapping \(mapping.name ?? "(unnamed)"), which a compiled mapping model cannot hold"
                )
            }
            return value
        }
        func properties(_ mappings: [NSPropertyMapping]?) throws -> PropertyListValue {
            var items: [PropertyListValue] = []
            for property in mappings ?? [] {
                let value = try archived(
                    property.valueExpression, "value expression of \(property.name ?? "(unnamed)")")
                items.append(
                    object(
                        ["NSPropertyMapping", "NSObject"],
                        [
                            ("NSDestinationPropertyName", string(property.name)), ("NSValueExpression", value),
                            ("NSUserInfo", property.userInfo.map { userInfo($0) } ?? .uid(0)),
                            ("NSPropertyTransforms", .uid(0)),
                        ]))
            }
            return array(items)
        }
        let source = try archived(mapping.sourceExpression, "source expression")
        let fields: [(String, PropertyListValue)] = [
            ("NSMappingName", string(mapping.name)),
            ("NSMappingType", .integer(Int(mapping.mappingType.rawValue))),
            ("NSSourceEntityName", string(mapping.sourceEntityName)),
            ("NSSourceEntityVersionHash", mapping.sourceEntityVersionHash.map { append(.data($0)) } ?? .uid(0)),
            ("NSDestinationEntityName", string(mapping.destinationEntityName)),
            (
                "NSDestinationEntityVersionHash",
                mapping.destinationEntityVersionHash.map { append(.data($0)) } ?? .uid(0)
            ),
            ("NSSourceExpression", source),
            ("NSEntityMigrationPolicyClassName", string(mapping.entityMigrationPolicyClassName)),
            ("NSUserInfo", mapping.userInfo.map { userInfo($0) } ?? .uid(0)),
            ("NSAttributeMappings", try properties(mapping.attributeMappings)),
            ("NSRelationshipMappings", try properties(mapping.relationshipMappings)),
        ]
        return object(["NSEntityMapping", "NSObject"], fields, at: index)
    }
}
