import CoreData
import Foundation

/// A user's own atomic store, written only against Apple's public NSAtomicStore API (Atomic Store
/// Programming Topics): a JSON file of objects keyed by UUID-string reference objects. `load()`
/// makes a cache node per object and relates nodes to nodes; `save()` writes `cacheNodes()`;
/// new objects get their nodes from the inherited `newCacheNode(for:)`.
final class JSONAtomicStore: NSAtomicStore, @unchecked Sendable {
    static let typeName = "JSONAtomicStore"
    /// How many times the store wrote its file.
    var saves = 0

    override var type: String { Self.typeName }

    override func newReferenceObject(for managedObject: NSManagedObject) -> Any { UUID().uuidString }

    override class func metadataForPersistentStore(with url: URL) throws -> [String: Any] {
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        return try decodeMetadata(document)
    }

    private static func decodeMetadata(_ document: [String: Any]) throws -> [String: Any] {
        guard let text = document["metadata"] as? String, let data = Data(base64Encoded: text) else { return [:] }
        return try PropertyListSerialization.propertyList(from: data, format: nil) as? [String: Any] ?? [:]
    }

    override func load() throws {
        guard let url, FileManager.default.fileExists(atPath: url.path) else { return }
        let document = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        metadata = try Self.decodeMetadata(document)
        let model = persistentStoreCoordinator!.managedObjectModel
        let objects = document["objects"] as? [[String: Any]] ?? []
        var nodes: [String: NSAtomicStoreCacheNode] = [:]
        for object in objects {
            let entity = model.entitiesByName[object["entity"] as! String]!
            let reference = object["ref"] as! String
            nodes[reference] = NSAtomicStoreCacheNode(objectID: objectID(for: entity, withReferenceObject: reference))
        }
        for object in objects {
            let node = nodes[object["ref"] as! String]!
            let values = object["values"] as? [String: Any] ?? [:]
            for (name, property) in node.objectID.entity.propertiesByName {
                guard let stored = values[name] else { continue }
                if let relationship = property as? NSRelationshipDescription {
                    if relationship.isToMany {
                        let related = (stored as? [String] ?? []).compactMap { nodes[$0] }
                        let collection: Any =
                            relationship.isOrdered ? NSOrderedSet(array: related) : NSSet(array: related)
                        node.setValue(collection, forKey: name)
                    } else {
                        node.setValue((stored as? String).flatMap { nodes[$0] }, forKey: name)
                    }
                } else {
                    node.setValue(Self.decode(stored), forKey: name)
                }
            }
        }
        addCacheNodes(Set(nodes.values))
    }

    override func save() throws {
        guard let url else { return }
        var objects: [[String: Any]] = []
        for node in cacheNodes() {
            var values: [String: Any] = [:]
            for (name, property) in node.objectID.entity.propertiesByName {
                guard let value = node.value(forKey: name) else { continue }
                if let relationship = property as? NSRelationshipDescription {
                    if relationship.isToMany {
                        let members = (value as? NSOrderedSet)?.array ?? (value as? NSSet)?.allObjects ?? []
                        values[name] = members.compactMap { ($0 as? NSAtomicStoreCacheNode).map(reference) }
                    } else if let destination = value as? NSAtomicStoreCacheNode {
                        values[name] = reference(destination)
                    }
                } else {
                    values[name] = Self.encode(value)
                }
            }
            objects.append(["entity": node.objectID.entity.name!, "ref": reference(node), "values": values])
        }
        let metadata = try PropertyListSerialization.data(
            fromPropertyList: metadata ?? [:], format: .binary, options: 0)
        let document: [String: Any] = ["metadata": metadata.base64EncodedString(), "objects": objects]
        try JSONSerialization.data(withJSONObject: document).write(to: url, options: .atomic)
        saves += 1
    }

    private func reference(_ node: NSAtomicStoreCacheNode) -> String {
        referenceObject(for: node.objectID) as! String
    }

    private static func encode(_ value: Any) -> Any {
        switch value {
        case let date as Date: ["date": date.timeIntervalSinceReferenceDate]
        case let data as Data: ["data": data.base64EncodedString()]
        case let uuid as UUID: ["uuid": uuid.uuidString]
        case let decimal as Decimal: ["decimal": decimal.description]
        case let url as URL: ["url": url.absoluteString]
        case let bool as Bool: ["bool": bool]
        case let float as Float: Double(float)
        default: value
        }
    }

    private static func decode(_ value: Any) -> Any? {
        guard let box = value as? [String: Any], box.count == 1, let (kind, content) = box.first else { return value }
        switch kind {
        case "date": return (content as? Double).map(Date.init(timeIntervalSinceReferenceDate:))
        case "data": return (content as? String).flatMap { Data(base64Encoded: $0) }
        case "uuid": return (content as? String).flatMap(UUID.init(uuidString:))
        case "decimal": return (content as? String).flatMap { Decimal(string: $0) }
        case "url": return (content as? String).flatMap(URL.init(string:))
        case "bool": return content as? Bool
        default: return value
        }
    }
}
