import CoreData

/// A model whose root entity is abstract (NSEntityDescription `isAbstract`): `Writer`, with a
/// `name`, and its one concrete sub-entity `Author`. A row whose `Z_ENT` names `Writer` is a
/// damaged store, which the tests of damaged rows make by hand.
enum AbstractWriterModel {
    static func make() -> NSManagedObjectModel {
        let writer = NSEntityDescription()
        writer.name = "Writer"
        writer.isAbstract = true
        let name = NSAttributeDescription()
        name.name = "name"
        name.attributeType = .stringAttributeType
        writer.properties = [name]
        let author = NSEntityDescription()
        author.name = "Author"
        writer.subentities = [author]
        let model = NSManagedObjectModel()
        model.entities = [writer, author]
        return model
    }
}
