import Foundation
import OpenCoreData
import SwiftData
import Testing

/// An author owns their books: deleting the author deletes them. The inverse is named.
@Model
final class Author {
    var name: String
    @Relationship(deleteRule: .cascade, inverse: \Book.author) var books: [Book] = []

    init(name: String) { self.name = name }
}

/// A book's author is optional; its labels are many-to-many with the labels' books, an inverse
/// SwiftData infers (each class has exactly one relationship to the other).
@Model
final class Book {
    var title: String
    var author: Author?
    var labels: [Label] = []

    init(title: String, author: Author? = nil) {
        self.title = title
        self.author = author
    }
}

@Model
final class Label {
    var text: String
    var books: [Book] = []

    init(text: String) { self.text = text }
}

/// A student must have a school (a to-one that cannot be empty), so SwiftData infers no inverse
/// with the school's students: both stay one-way.
@Model
final class School {
    var name: String
    var students: [Student] = []

    init(name: String) { self.name = name }
}

@Model
final class Student {
    var name: String
    var school: School

    init(name: String, school: School) {
        self.name = name
        self.school = school
    }
}

/// A relationship whose named inverse is an attribute, which cannot be one.
@Model
final class Review {
    var stars: Int
    @Relationship(inverse: \Author.name) var author: Author?

    init(stars: Int) { self.stars = stars }
}

/// SwiftData's relationships on Linux. Rules from Apple's SwiftData documentation:
/// `Relationship(_:deleteRule:minimumModelCount:maximumModelCount:originalName:inverse:hashModifier:)`
/// (a property holding a model or an array of models is a relationship; `inverse` names the
/// property at the other end; `deleteRule` is `.nullify` unless given), `Schema.Relationship.DeleteRule`
/// (`.cascade` deletes the related models, `.nullify` removes the deleted model from them),
/// `ModelContext.insert(_:)` (related models are inserted with the model), "Defining data
/// relationships with enumerations and model classes" (a to-many is an unordered array), and
/// Core Data's relationship layout in SQLite, which SwiftData writes.
@Suite("SwiftData: relationships")
struct SwiftDataRelationshipTests {
    /// The schema follows relationships to the classes they reach, pairs the named inverse,
    /// infers the one between two classes with one relationship each way, leaves a pair with a
    /// to-one that cannot be empty one-way, and takes delete rules and cardinality from the
    /// declarations.
    @Test func theSchemaHasARelationshipPerModelPropertyWithItsInverse() throws {
        let schema = Schema([Author.self, School.self])
        #expect(Set(schema.entities.map(\.name)) == ["Author", "Book", "Label", "School", "Student"])
        let authorBooks = try #require(schema.entity(for: Author.self)?.relationshipsByName["books"])
        #expect(authorBooks.destination == "Book")
        #expect(!authorBooks.isToOneRelationship)
        #expect(authorBooks.inverseName == "author")
        let entities = try #require(NSManagedObjectModel.makeManagedObjectModel(for: [Author.self, School.self]))
            .entitiesByName
        let books = try #require(entities["Author"]?.relationshipsByName["books"])
        let author = try #require(entities["Book"]?.relationshipsByName["author"])
        #expect(books.isToMany && !author.isToMany)
        #expect(books.destinationEntity?.name == "Book")
        #expect(books.inverseRelationship === author && author.inverseRelationship === books)
        #expect(books.deleteRule == .cascadeDeleteRule && author.deleteRule == .nullifyDeleteRule)
        #expect(author.isOptional && !(entities["Student"]?.relationshipsByName["school"]?.isOptional ?? true))

        let labels = try #require(entities["Book"]?.relationshipsByName["labels"])
        #expect(labels.isToMany && labels.inverseRelationship?.name == "books")
        #expect(labels.inverseRelationship?.entity?.name == "Label")

        #expect(entities["School"]?.relationshipsByName["students"]?.inverseRelationship == nil)
        #expect(entities["Student"]?.relationshipsByName["school"]?.inverseRelationship == nil)
        #expect(entities["Author"]?.attributesByName["books"] == nil)
    }

    /// A named inverse that is not a relationship back cannot be stored: the container throws
    /// `NSPersistentStoreIncompatibleSchemaError` naming the property, instead of storing a
    /// relationship no other side keeps.
    @Test func anInverseThatIsNotARelationshipBackIsAnError() {
        #expect {
            _ = try ModelContainer(for: Review.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        } throws: { error in
            let error = error as NSError
            return error.domain == NSCocoaErrorDomain && error.code == NSPersistentStoreIncompatibleSchemaError
                && (error.userInfo[NSLocalizedDescriptionKey] as? String)?.contains("Review.author") == true
        }
    }

    /// Inserting a model inserts the models its relationships hold; the save writes them all, in
    /// Core Data's layout (a to-one as a `Z<NAME>` column of the destination's key, a
    /// many-to-many as a join table), and a new container reads the graph back with each
    /// inverse kept.
    @Test @MainActor func aGraphInsertedAtItsRootIsSavedWhole() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("library.store")
        do {
            let container = try ModelContainer(for: Author.self, configurations: ModelConfiguration(url: url))
            let context = container.mainContext
            let author = Author(name: "Le Guin")
            let fantasy = Label(text: "fantasy")
            let earthsea = Book(title: "A Wizard of Earthsea")
            earthsea.labels = [fantasy, Label(text: "classic")]
            let lathe = Book(title: "The Lathe of Heaven")
            lathe.labels = [fantasy]
            author.books = [earthsea, lathe]
            context.insert(author)
            #expect(context.insertedModelsArray.count == 5)
            #expect(earthsea.modelContext === context && fantasy.modelContext === context)
            // The inverses are kept once the models are in the context.
            #expect(earthsea.author === author)
            #expect(Set(fantasy.books.map(\.title)) == ["A Wizard of Earthsea", "The Lathe of Heaven"])
            try context.save()
        }
        #expect(try sqlite3(url, "SELECT name FROM pragma_table_info('ZBOOK') WHERE name = 'ZAUTHOR'") == ["ZAUTHOR"])
        #expect(
            try sqlite3(url, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\'")
                .contains { $0.hasSuffix("BOOKS") || $0.hasSuffix("LABELS") })

        let container = try ModelContainer(for: Author.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let author = try #require(try context.fetch(FetchDescriptor<Author>()).first)
        #expect(author.name == "Le Guin")
        #expect(Set(author.books.map(\.title)) == ["A Wizard of Earthsea", "The Lathe of Heaven"])
        #expect(author.books.allSatisfy { $0.author === author })
        let earthsea = try #require(author.books.first { $0.title == "A Wizard of Earthsea" })
        #expect(Set(earthsea.labels.map(\.text)) == ["fantasy", "classic"])
        let labels = try context.fetch(FetchDescriptor<Label>(sortBy: [SortDescriptor(\.text)]))
        #expect(labels.map { $0.books.count } == [1, 2])
    }

    /// Setting a relationship of a model in a context to a model in none inserts it, and Core
    /// Data keeps the inverse: the book appears among its author's books.
    @Test @MainActor func settingARelationshipInsertsTheModelAndKeepsTheInverse() throws {
        let container = try ModelContainer(
            for: Author.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        let author = Author(name: "Calvino")
        context.insert(author)
        let book = Book(title: "Invisible Cities")
        book.author = author
        let other = Book(title: "If on a winter's night a traveler")
        author.books.append(other)
        #expect(other.modelContext === context)
        #expect(other.author === author)
        context.insert(book)
        #expect(Set(author.books.map(\.title)) == ["Invisible Cities", "If on a winter's night a traveler"])
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 2)
    }

    /// `.cascade` deletes an author's books with the author; `.nullify` (the default) removes a
    /// deleted book from its author's books.
    @Test @MainActor func deleteRulesCascadeAndNullify() throws {
        let container = try ModelContainer(
            for: Author.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        let author = Author(name: "Borges")
        author.books = [Book(title: "Ficciones"), Book(title: "El Aleph"), Book(title: "El hacedor")]
        context.insert(author)
        try context.save()

        let hacedor = try #require(author.books.first { $0.title == "El hacedor" })
        context.delete(hacedor)
        try context.save()
        #expect(Set(author.books.map(\.title)) == ["Ficciones", "El Aleph"])
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 2)

        context.delete(author)
        try context.save()
        #expect(try context.fetchCount(FetchDescriptor<Author>()) == 0)
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 0)
    }

    /// A one-way to-one that cannot be empty is saved and read back; the school's one-way
    /// to-many is kept apart from it (no inverse joins them).
    @Test @MainActor func oneWayRelationshipsAreKeptApart() throws {
        let container = try ModelContainer(
            for: School.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        let school = School(name: "Bauhaus")
        let student = Student(name: "Anni", school: school)
        context.insert(student)
        #expect(school.modelContext === context)
        #expect(school.students.isEmpty)
        try context.save()
        let fetched = try #require(try context.fetch(FetchDescriptor<Student>()).first)
        #expect(fetched.school.name == "Bauhaus")
        #expect(fetched.school.students.isEmpty)
    }

    /// A context does not keep alive the models no one else holds: their values stay in the
    /// context, and asking again makes a model with them.
    @Test @MainActor func aContextHoldsItsModelsWeakly() throws {
        let container = try ModelContainer(
            for: Author.self, configurations: ModelConfiguration(isStoredInMemoryOnly: true))
        let context = container.mainContext
        weak var released: Author?
        do {
            let author = Author(name: "Woolf")
            context.insert(author)
            released = author
        }
        #expect(released == nil)
        #expect(context.insertedModelsArray.compactMap { ($0 as? Author)?.name } == ["Woolf"])
        try context.save()
        #expect(try context.fetch(FetchDescriptor<Author>()).map(\.name) == ["Woolf"])
    }
}
