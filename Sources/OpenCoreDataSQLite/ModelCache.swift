internal import CZlib
import OpenCoreData
import OpenCoreDataSQL

/// `Z_MODELCACHE`: the model that wrote a store, as raw deflate (no zlib header) of the same
/// keyed archive a compiled `.mom` holds (STORE-FORMAT.md, "Bookkeeping tables").
enum ModelCache {
    /// The largest model archive accepted, so a hostile store cannot exhaust memory.
    static let maximumSize = 64 << 20

    /// Inflates raw-deflate `bytes`.
    ///
    /// - Throws: `NSPersistentStoreOpenError` when the data is not raw deflate or too large.
    static func inflate(_ bytes: [UInt8]) throws -> Data {
        var stream = z_stream()
        guard inflateInit2_(&stream, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "Cannot start inflating the model cache.")
        }
        defer { inflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var input = bytes
        var status: Int32 = Z_OK
        try input.withUnsafeMutableBufferPointer { source in
            stream.next_in = source.baseAddress
            stream.avail_in = uInt(source.count)
            repeat {
                try chunk.withUnsafeMutableBufferPointer { buffer in
                    stream.next_out = buffer.baseAddress
                    stream.avail_out = uInt(buffer.count)
                    status = CZlib.inflate(&stream, Z_NO_FLUSH)
                    guard status == Z_OK || status == Z_STREAM_END else {
                        throw CoreDataError.make(
                            NSPersistentStoreOpenError, "The store's model cache is not valid deflate data.")
                    }
                    output.append(buffer.baseAddress!, count: buffer.count - Int(stream.avail_out))
                }
                guard output.count <= maximumSize else {
                    throw CoreDataError.make(NSPersistentStoreOpenError, "The store's model cache is too large.")
                }
            } while status != Z_STREAM_END && (stream.avail_in > 0 || stream.avail_out == 0)
        }
        guard status == Z_STREAM_END else {
            throw CoreDataError.make(NSPersistentStoreOpenError, "The store's model cache is truncated.")
        }
        return output
    }

    /// Deflates `data` as raw deflate, as Apple writes `Z_MODELCACHE`.
    static func deflate(_ data: Data) throws -> Data {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { throw CoreDataError.make(NSPersistentStoreOperationError, "Cannot start deflating the model.") }
        defer { deflateEnd(&stream) }
        var input = [UInt8](data)
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 16)
        let status = input.withUnsafeMutableBufferPointer { source in
            output.withUnsafeMutableBufferPointer { target in
                stream.next_in = source.baseAddress
                stream.avail_in = uInt(source.count)
                stream.next_out = target.baseAddress
                stream.avail_out = uInt(target.count)
                return CZlib.deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else {
            throw CoreDataError.make(NSPersistentStoreOperationError, "Cannot deflate the model.")
        }
        return Data(output.prefix(Int(stream.total_out)))
    }

    /// The model in a store's `Z_MODELCACHE` blob.
    static func model(from blob: [UInt8]) throws -> NSManagedObjectModel {
        let archive = try inflate(blob)
        do {
            return try CompiledModelDecoder.model(from: archive)
        } catch let problem as ModelProblem {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "The store's model cache cannot be decoded: \(problem.message)")
        }
    }
}

extension NSManagedObjectModel {
    /// The model cached inside the SQLite store at `url` (`Z_MODELCACHE`), so a store opens with
    /// no model file at all. The store is opened read-only and nothing is written beside it.
    ///
    /// A coordinator given this model opens the store even where Apple's version hashes cannot be
    /// recomputed (derived attributes, STORE-FORMAT.md): the model is the store's own.
    ///
    /// > Note: Differs from Apple Core Data: an addition (DEVIATIONS.md). Apple reads the cache
    /// > only internally, for migration.
    ///
    /// - Throws: `NSPersistentStoreOpenError` (134080) when the file is not a Core Data store or
    ///   has no readable model cache.
    public convenience init(contentsOfStoreAt url: URL) throws {
        try StoreFile.refuseNonRegularFile(at: url, code: NSPersistentStoreOpenError, "read")
        let connection = try SQLiteConnection(path: url.path, mode: .readOnly)
        defer { connection.close() }
        let rows: [[SQLiteValue]]
        let uuid: String?
        do {
            rows = try connection.rows(SQLBookkeeping.modelCache)
            uuid = try connection.rows(SQLBookkeeping.metadataUUID).first.flatMap {
                if case .text(let text)? = $0.first { return text }
                return nil
            }
        } catch let error as NSError {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "The file at \(url.path) is not a Core Data SQLite store.",
                [NSURLErrorKey: url, NSUnderlyingErrorKey: error])
        }
        guard case .blob(let blob)? = rows.first?.first else {
            throw CoreDataError.make(
                NSPersistentStoreOpenError, "The store at \(url.path) has no cached model.", [NSURLErrorKey: url])
        }
        let model = try ModelCache.model(from: blob)
        self.init()
        adoptModel(model)
        cachedFromStoreUUID = uuid
    }
}
