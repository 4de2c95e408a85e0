import Foundation

@testable import OpenCoreData

/// libFuzzer entry point: any bytes, as the `contents` file of an `.xcdatamodel`, must load as a
/// model or fail with an error — never crash, hang or load silently as something else. A loaded
/// model must hash, list its properties and survive being compiled and decoded again.
@_cdecl("LLVMFuzzerTestOneInput")
public func modelFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let directory = NSTemporaryDirectory() + "opencoredata-model-fuzz-\(getpid()).xcdatamodel"
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let contents = directory + "/contents"
    guard FileManager.default.createFile(atPath: contents, contents: Data(bytes: data, count: size)) else { return 0 }
    guard let model = try? NSManagedObjectModel(validatingContentsOf: URL(fileURLWithPath: directory)) else {
        return 0
    }
    for entity in model.entities {
        _ = entity.versionHash
        _ = entity.propertiesByName.count
        for case let relationship as NSRelationshipDescription in entity.properties {
            _ = relationship.inverseRelationship?.destinationEntity?.name
        }
    }
    guard let again = try? CompiledModelDecoder.model(from: CompiledModelEncoder.archive(model)) else {
        fatalError("a model loaded from XML does not decode after compiling it")
    }
    if again.entityVersionHashesByName != model.entityVersionHashesByName {
        fatalError("compiling a model changed its version hashes")
    }
    return 0
}
