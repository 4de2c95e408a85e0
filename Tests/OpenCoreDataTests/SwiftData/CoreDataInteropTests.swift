import Foundation
import OpenCoreData
import SwiftData
import Testing

/// A store written with the Core Data API opens with the SwiftData API and reads as the models:
/// SwiftData keeps its models in a Core Data store, whose model is the one
/// `NSManagedObjectModel.makeManagedObjectModel(for:)` gives (SwiftData reference; "Adopting
/// SwiftData for a Core Data app", WWDC23: the two frameworks share the store). Attributes,
/// a composite written as Apple documents it (a dictionary of its elements), a to-many with its
/// inverse and a many-to-many come back as the model classes' values.
@Suite("SwiftData and Core Data: one store, both APIs")
struct SwiftDataCoreDataInteropTests {
    @Test @MainActor func aStoreWrittenWithCoreDataReadsAsModels() throws {
        let directory = TemporaryDirectory()
        let url = directory.file("shared.store")
        let model = try #require(
            NSManagedObjectModel.makeManagedObjectModel(for: [Author.self, Contact.self]))
        do {
            let coordinator = NSPersistentStoreCoordinator(managedObjectModel: model)
            try coordinator.addPersistentStore(ofType: NSSQLiteStoreType, configurationName: nil, at: url, options: nil)
            let context = NSManagedObjectContext(concurrencyType: .confinementConcurrencyType)
            context.persistentStoreCoordinator = coordinator
            let author = NSEntityDescription.insertNewObject(forEntityName: "Author", into: context)
            author.setValue("Le Guin", forKey: "name")
            let label = NSEntityDescription.insertNewObject(forEntityName: "Label", into: context)
            label.setValue("classic", forKey: "text")
            for title in ["Earthsea", "The Dispossessed"] {
                let book = NSEntityDescription.insertNewObject(forEntityName: "Book", into: context)
                book.setValue(title, forKey: "title")
                book.setValue(author, forKey: "author")
                book.mutableSetValue(forKey: "labels").add(label)
            }
            let contact = NSEntityDescription.insertNewObject(forEntityName: "Contact", into: context)
            contact.setValue("Ursula", forKey: "name")
            contact.setValue(
                [
                    "street": "1 Oak St", "city": "Portland", "kind": "home",
                    "location": ["latitude": 45.52, "longitude": -122.68],
                ] as [String: Any], forKey: "address")
            contact.setValue(try PropertyListEncoder().encode(["sf", "essays"]), forKey: "tags")
            contact.setValue(try PropertyListEncoder().encode([Date]()), forKey: "visits")
            try context.save()
        }

        let container = try ModelContainer(
            for: Author.self, Contact.self, configurations: ModelConfiguration(url: url))
        let context = ModelContext(container)
        let author = try #require(try context.fetch(FetchDescriptor<Author>()).first)
        #expect(author.name == "Le Guin")
        #expect(author.books.map(\.title).sorted() == ["Earthsea", "The Dispossessed"])
        #expect(author.books.allSatisfy { $0.author === author && $0.labels.map(\.text) == ["classic"] })
        let label = try #require(try context.fetch(FetchDescriptor<Label>()).first)
        #expect(label.books.count == 2)
        let contact = try #require(try context.fetch(FetchDescriptor<Contact>()).first)
        #expect(contact.address.city == "Portland")
        #expect(contact.address.postcode == nil)
        #expect(contact.address.kind == .home)
        #expect(contact.address.location.longitude == -122.68)
        #expect(contact.tags == ["sf", "essays"])
        #expect(contact.previous == nil)
    }
}
