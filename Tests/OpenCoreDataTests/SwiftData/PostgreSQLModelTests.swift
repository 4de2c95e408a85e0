import Foundation
import OpenCoreData
import SwiftData
import Testing

/// Beyond Apple: the same `@Model` code on a database many servers share. A `ModelConfiguration`
/// whose URL is `postgres://…` keeps the models in PostgreSQL (the program links the
/// `OpenCoreDataPostgres` product); everything else — relationships, `#Predicate` in SQL, delete
/// rules, `deleteAllData()` — is the same SwiftData.
@Suite("SwiftData: a PostgreSQL ModelConfiguration", .enabled(if: PostgresTestServer.runsTests))
struct SwiftDataPostgreSQLTests {
    @Test func modelsLiveInThePostgreSQLDatabaseTheURLNames() throws {
        let url = PostgresTestServer.url(schema: PostgresTestServer.uniqueSchema("swiftdata"))
        do {
            let container = try ModelContainer(for: Author.self, configurations: ModelConfiguration(url: url))
            let context = ModelContext(container)
            for author in SwiftDataPredicateTests.library() { context.insert(author) }
            try context.save()
        }
        // Another container, as another server would open it.
        let container = try ModelContainer(for: Author.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let authors = try context.fetch(FetchDescriptor<Author>(sortBy: [SortDescriptor(\.name)]))
        #expect(authors.map(\.name) == ["Borges", "Le Guin"])
        #expect(authors.map { $0.books.count } == [2, 1])
        let fantasy = try context.fetch(
            FetchDescriptor<Book>(
                predicate: #Predicate { $0.labels.contains { $0.text == "fantasy" } }, sortBy: [SortDescriptor(\.title)]
            ))
        #expect(fantasy.map(\.title) == ["A Wizard of Earthsea", "Ficciones"])
        #expect(
            try context.fetchCount(FetchDescriptor<Book>(predicate: #Predicate { $0.author?.name == "Borges" })) == 2)

        context.delete(authors[0])
        try context.save()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Book>()) == 1)

        container.deleteAllData()
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Author>()) == 0)
    }
}
