import Foundation

@testable import OpenCoreData

/// libFuzzer entry point for the atomic stores' file formats (issue 25). The first byte picks the
/// reading: even, the rest is an XML store (seeds: the fixtures' `xcmapping.xml` files, read with
/// Xcode's mapping-file model); odd, a binary store. Any bytes must decode to a store image or
/// fail with `StoreFileProblem` — never crash, hang or allocate in proportion to a count the file
/// claims. An image that decodes must survive the round trip through both formats unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func atomicFuzzerTestOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let bytes = Data(bytes: data + 1, count: size - 1)
    let model = XcodeMappingFile.model
    let format: any AtomicStoreFormat.Type = data[0] % 2 == 0 ? XMLStoreFormat.self : BinaryStoreFormat.self
    guard let image = try? format.decode(bytes, model: model), (try? image.validate()) != nil else { return 0 }
    _ = try? format.metadata(of: bytes)
    for other in [XMLStoreFormat.self, BinaryStoreFormat.self] as [any AtomicStoreFormat.Type] {
        guard let encoded = try? other.encode(image) else { continue }
        guard let again = try? other.decode(encoded, model: model) else {
            fatalError("\(other) cannot read back what it wrote")
        }
        guard again.objects.count == image.objects.count, again.lastReference == image.lastReference,
            zip(again.objects, image.objects).allSatisfy({ $0.reference == $1.reference && $0.entity === $1.entity })
        else { fatalError("\(other) changed the objects of a store") }
    }
    return 0
}
