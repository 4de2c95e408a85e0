/// A model version a staged migration names: the model itself, or where to find it, with the
/// version checksum it must have (``NSManagedObjectModel/versionChecksum``).
open class NSManagedObjectModelReference: NSObject, @unchecked Sendable {
    private let model: NSManagedObjectModel?
    /// The checksum the model was named with.
    public let versionChecksum: String

    /// A reference to `model`, which has `versionChecksum`.
    public init(model: NSManagedObjectModel, versionChecksum: String) {
        self.model = model
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the model in the file at `fileURL` (`.mom`, `.xcdatamodel`, …).
    public init(fileURL: URL, versionChecksum: String) {
        model = NSManagedObjectModel(contentsOf: fileURL)
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the version, among the models in `bundle` (the main bundle when `nil`),
    /// whose entity version hashes are `entityVersionHashes`.
    public init(entityVersionHashes: [AnyHashable: Any], in bundle: Bundle?, versionChecksum: String) {
        var hashes: [String: Any] = [:]
        for case (let key as String, let value) in entityVersionHashes { hashes[key] = value }
        model = NSManagedObjectModel.mergedModel(
            from: [bundle ?? Bundle.main], forStoreMetadata: [NSStoreModelVersionHashesKey: hashes])
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// A reference to the version with `versionChecksum` of the model named `modelName`
    /// (`<name>.momd`, `.mom`, `.xcdatamodeld` or `.xcdatamodel`) in `bundle` (the main bundle when `nil`).
    public init(name modelName: String, in bundle: Bundle?, versionChecksum: String) {
        let resources = (bundle ?? Bundle.main).resourceURL ?? (bundle ?? Bundle.main).bundleURL
        var found: NSManagedObjectModel?
        for suffix in ["momd", "xcdatamodeld", "mom", "xcdatamodel"] {
            let file = resources.appendingPathComponent("\(modelName).\(suffix)")
            guard FileManager.default.fileExists(atPath: file.path) else { continue }
            found = ModelVersions.versions(of: file).lazy.compactMap { NSManagedObjectModel(contentsOf: $0) }
                .first { $0.versionChecksum == versionChecksum }
            if found != nil { break }
        }
        model = found
        self.versionChecksum = versionChecksum
        super.init()
    }

    /// The model, when it was found and has the checksum it was named with.
    var checkedModel: NSManagedObjectModel? {
        guard let model, model.versionChecksum == versionChecksum else { return nil }
        return model
    }

    /// The model. A reference whose model was not found, or has another checksum, resolves to an
    /// empty model; the staged migration refuses it (134110) rather than use it.
    open var resolvedModel: NSManagedObjectModel { checkedModel ?? NSManagedObjectModel() }
}
