import Foundation
import OpenCoreDataSQL

@testable import OpenCoreData
@testable import OpenCoreDataSQLite

/// libFuzzer entry point for the property lists inside a store file and beside a model. The
/// first byte picks what the rest is read as: 0 a store's metadata plist (`Z_METADATA.Z_PLIST`),
/// 1 a store's model cache (`Z_MODELCACHE`, raw deflate), 2 a transformable value's keyed archive
/// (read by `NSSecureUnarchiveFromDataTransformer`, decoded by the library's own reader), anything
/// else a compiled model (`.mom`).
/// Every input must decode or throw; a decoded model must hash, list its properties and survive
/// being archived and decoded again.
@_cdecl("LLVMFuzzerTestOneInput")
public func archiveFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Array(UnsafeBufferPointer(start: data + 1, count: size - 1))
    let model: NSManagedObjectModel?
    switch data[0] {
    case 0:
        _ = try? SQLStoreMetadata.decode([.text("fuzz"), .blob(bytes)], place: "fuzz", url: nil)
        return 0
    case 1:
        model = try? ModelCache.model(from: bytes)
    case 2:
        _ = NSSecureUnarchiveFromDataTransformer().transformedValue(Data(bytes))
        return 0
    default:
        model = try? CompiledModelDecoder.model(from: Data(bytes))
    }
    guard let model else { return 0 }
    exercise(model)
    guard let again = try? CompiledModelDecoder.model(from: CompiledModelEncoder.archive(model)) else {
        fatalError("a decoded model does not decode after archiving it again")
    }
    exercise(again)
    return 0
}

private func exercise(_ model: NSManagedObjectModel) {
    for entity in model.entities {
        _ = entity.versionHash
        _ = entity.propertiesByName.count
        _ = entity.subentities.count
        for case let relationship as NSRelationshipDescription in entity.properties {
            _ = relationship.inverseRelationship?.destinationEntity?.name
        }
    }
    _ = model.entityVersionHashesByName
}
