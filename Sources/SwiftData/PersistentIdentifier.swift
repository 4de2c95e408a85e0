import OpenCoreData

/// The identity of a model: its store's object ID once saved, a temporary one before.
/// Hashable, and `Codable` as the object's URI (or the temporary ID), so it round-trips through
/// JSON.
///
/// Related documentation: SwiftData, `PersistentIdentifier`.
public struct PersistentIdentifier: Hashable, Codable, Comparable, Sendable {
    /// The entity of the model.
    public let entityName: String
    /// The URI of the object (`x-coredata://<store UUID>/<Entity>/p<key>`), or of a temporary ID.
    let uri: String

    init(_ objectID: NSManagedObjectID) {
        entityName = objectID.entity.name ?? ""
        uri = objectID.uriString
    }

    private init(entityName: String, uri: String) {
        self.entityName = entityName
        self.uri = uri
    }

    /// A new temporary identifier of a model of `entityName` in no context.
    static func temporary(entityName: String) -> PersistentIdentifier {
        PersistentIdentifier(entityName: entityName, uri: "x-swiftdata-temporary://\(entityName)/\(UUID().uuidString)")
    }

    /// Orders identifiers by their URIs.
    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.uri < rhs.uri }
}
