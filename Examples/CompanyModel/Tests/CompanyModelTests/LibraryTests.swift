import CoreData
import Foundation
import Testing

@testable import CompanyModel

/// The classes Xcode's code generation makes from `Library.xcdatamodeld` (Xcode's "Generating
/// code" article; the Codegen setting of an entity), generated here at build time by the
/// `CoreDataModelGenerator` plugin: Book, Chapter and Novel are Class Definition, Author is
/// Category/Extension (its class is written in `Library.swift`), Shelf is Manual/None. They
/// compile unchanged and work as on Apple platforms: `Book(context:)`, typed properties,
/// `Book.fetchRequest()` returning `[Book]`, the to-many accessors, related objects and untyped
/// fetches made as their classes.
@Suite("Classes generated from Library.xcdatamodeld")
struct LibraryTests {
    private static func stack(_ url: URL) throws -> NSManagedObjectContext {
        try sqliteStack(url, model: try LibraryModel.make())
    }

    @Test("generated classes read and write every value on the SQLite store, and fetch as their classes")
    func generatedClassesRoundTrip() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("Library.sqlite")
        let isbn = UUID()
        do {
            let context = try Self.stack(url)
            let author = Author(context: context)
            author.name = "Le Guin"
            let book = Novel(context: context)
            book.title = "The Dispossessed"
            book.pages = 387
            book.price = NSDecimalNumber(string: "9.99")
            book.rating = 4.5
            book.isbn = isbn
            book.website = URL(string: "https://example.com/dispossessed")
            book.genre = "Science fiction"
            book.isSeries = false
            book.author = author
            for number in 1...3 {
                let chapter = Chapter(context: context)
                chapter.number = Int32(number)
                book.addToChapters(chapter)
            }
            let shelf = Shelf(context: context)
            shelf.label = "Favourites"
            book.addToShelves(shelf)
            try context.save()
        }
        let context = try Self.stack(url)
        let books = try context.fetch(Book.fetchRequest())
        let novel = try #require(books.first as? Novel)
        #expect(books.count == 1)
        #expect(novel.title == "The Dispossessed" && novel.genre == "Science fiction" && !novel.isSeries)
        #expect(novel.pages == 387 && novel.price == NSDecimalNumber(string: "9.99") && novel.rating == 4.5)
        #expect(novel.isbn == isbn && novel.website == URL(string: "https://example.com/dispossessed"))
        // Related objects come back as their classes: the generated accessors registered them.
        #expect(novel.author?.displayName == "Le Guin")
        #expect((novel.chapters?.array as? [Chapter])?.map(\.number) == [1, 2, 3])
        #expect((novel.shelves?.anyObject() as? Shelf)?.label == "Favourites")
        let untyped = try context.fetch(NSFetchRequest<NSManagedObject>(entityName: "Shelf"))
        #expect(untyped.first is Shelf, "an untyped fetch makes objects of the registered class")
    }

    @Test("NSPersistentContainer(name:) finds a model a target ships as a resource")
    func containerFindsTheModelInATargetsResources() throws {
        // NSPersistentContainer reference: "the name … is used to look up the model"; here the
        // model is `Library.momd`, which the plugin compiled into the example target's resources.
        let container = NSPersistentContainer(name: "Library")
        #expect(
            Set(container.managedObjectModel.entitiesByName.keys) == ["Author", "Book", "Chapter", "Novel", "Shelf"])
        let description = NSPersistentStoreDescription(url: URL(fileURLWithPath: "/dev/null"))
        container.persistentStoreDescriptions = [description]
        var failure: (any Error)?
        container.loadPersistentStores { _, error in failure = error }
        #expect(failure == nil)
        let book = Book(context: container.viewContext)
        book.title = "Earthsea"
        try container.viewContext.save()
        #expect(try container.viewContext.fetch(Book.fetchRequest()).map(\.title) == ["Earthsea"])
    }

    @Test("the root model classes say how to register the module's classes; subclasses inherit it")
    func rootClassesCarryTheRegistration() {
        // What lets the first typed use of any class (Book(context:), Book.entity(),
        // NSFetchRequest<Book>) make every class of the module known to Core Data.
        #expect((Book.self as Any.Type) is any _GeneratedModelClass.Type)
        #expect((Novel.self as Any.Type) is any _GeneratedModelClass.Type)
        #expect((Shelf.self as Any.Type) is any _GeneratedModelClass.Type)
        #expect(!((NSManagedObject.self as Any.Type) is any _GeneratedModelClass.Type))
    }

    @Test("the plugin compiles Library.xcdatamodeld into the bundle as Xcode does: Library.momd")
    func compiledModelInBundle() throws {
        // Apple's apps find their model as Xcode left it in the bundle: a `.momd` folder holding
        // each version's `.mom` and `VersionInfo.plist`, whose current version is the one loaded.
        let url = try #require(Bundle.module.url(forResource: "Library", withExtension: "momd"))
        let files = try FileManager.default.contentsOfDirectory(atPath: url.path).sorted()
        #expect(files == ["Library.mom", "VersionInfo.plist"])
        let info = try #require(
            PropertyListSerialization.propertyList(
                from: Data(contentsOf: url.appendingPathComponent("VersionInfo.plist")), format: nil)
                as? [String: Any])
        #expect(info["NSManagedObjectModel_CurrentVersionName"] as? String == "Library")
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources/CompanyModel/Library.xcdatamodeld")
        let expected = try NSManagedObjectModel(validatingContentsOf: source)
        let compiled = try NSManagedObjectModel(validatingContentsOf: url)
        #expect(compiled == expected)
        #expect(compiled.entitiesByName.keys.sorted() == ["Author", "Book", "Chapter", "Novel", "Shelf"])
        // `mergedModel(from:)` finds it among the bundle's resources, as on Apple platforms.
        #expect(NSManagedObjectModel.mergedModel(from: [Bundle.module]) == expected)
    }
}
