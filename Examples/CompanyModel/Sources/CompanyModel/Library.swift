import CoreData
import Foundation

// The Library model (`Library.xcdatamodeld`) uses all three Codegen settings Xcode offers: Book,
// Chapter and Novel are Class Definition (the plugin generates their classes and properties),
// Author is Category/Extension (the plugin generates its properties; the class is written here),
// Shelf is Manual/None (both are written here, as an app writes them).

/// Author's class; its properties are generated (`Author+CoreDataProperties.swift`).
public class Author: NSManagedObject {
    /// A method of the app's own beside the generated properties.
    public var displayName: String { name ?? "Anonymous" }
}

/// Shelf, written by hand (Codegen Manual/None) as Xcode's "Create NSManagedObject Subclass"
/// writes it; the `@objc(Shelf)` line is the one change Linux needs (a guard).
#if canImport(ObjectiveC)
    @objc(Shelf)
#endif
public class Shelf: NSManagedObject {
    @NSManaged public var label: String?
    @NSManaged public var books: NSSet?
}

/// The Library model, compiled from `Library.xcdatamodeld` into the module's resources as Xcode
/// compiles it into an app's bundle, and looked up as apps look it up.
public enum LibraryModel {
    /// The compiled model, `Library.momd`.
    public static var url: URL? { Bundle.module.url(forResource: "Library", withExtension: "momd") }

    /// A new model loaded from ``url``.
    ///
    /// - Throws: the model loading error when the resource is missing or does not load.
    public static func make() throws -> NSManagedObjectModel {
        guard let url else { throw CocoaError(.fileNoSuchFile) }
        return try NSManagedObjectModel(validatingContentsOf: url)
    }
}
