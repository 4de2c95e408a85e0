import CoreData
import Foundation
import Testing

@testable import CompanyModel

/// The code of the "Sharing model code with an Apple app" article (OpenCoreData's DocC catalog),
/// run: the generated classes of `Library.xcdatamodeld` used as Xcode's generated code is — a
/// to-many accessor keeps the inverse (Core Data Programming Guide, "Creating Managed Object
/// Relationships": Core Data maintains inverses), and `Book.fetchRequest()` answers instances of
/// the entities' classes, a sub-entity's object as its own class.
@Suite("Article: sharing model code")
struct ArticleTests {
    @Test("generated classes: typed properties, a to-many accessor that keeps the inverse, a typed fetch")
    func generatedClassesAsTheArticleShows() throws {
        let context = try memoryStack(try LibraryModel.make())

        let book = Novel(context: context)
        book.title = "The Dispossessed"
        book.pages = 387
        let chapter = Chapter(context: context)
        book.addToChapters(chapter)
        try context.save()
        let books = try context.fetch(Book.fetchRequest())

        #expect(chapter.book === book)
        #expect(books.count == 1)
        #expect(books.first is Novel)
        #expect(books.first?.title == "The Dispossessed")
    }
}
