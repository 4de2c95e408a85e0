import CoreData
import Testing

/// Fetch request templates. Rules from the NSManagedObjectModel reference
/// (`fetchRequestTemplate(forName:)`, `fetchRequestFromTemplate(withName:substitutionVariables:)`:
/// the template's variables are replaced in a copy; the template itself is unchanged).
@Suite("Fetch request templates")
struct FetchRequestTemplateTests {
    @Test("a template's $variables are substituted in a copy, and the copy fetches")
    func substitution() throws {
        let model = CompanyModel.make()
        let template = NSFetchRequest<NSFetchRequestResult>(entityName: "Employee")
        template.entity = model.entitiesByName["Employee"]
        template.predicate = NSPredicate(format: "salary >= $MIN")
        model.setFetchRequestTemplate(template, forName: "Rich")
        #expect(model.fetchRequestTemplate(forName: "Rich") === template)
        #expect(model.fetchRequestTemplatesByName.keys.sorted() == ["Rich"])
        let request = try #require(
            model.fetchRequestFromTemplate(withName: "Rich", substitutionVariables: ["MIN": 200]))
        #expect(request.predicate?.predicateFormat == "salary >= 200")
        #expect(template.predicate?.predicateFormat == "salary >= $MIN")
        #expect(model.fetchRequestFromTemplate(withName: "Nope", substitutionVariables: [:]) == nil)

        let context = try CompanyModel.stack(model)
        context.employee("Ada", salary: 300)
        context.employee("Bob", salary: 100)
        #expect(try context.count(for: request) == 1)
    }

    @Test("a model file's <fetchRequest> templates load with entity, predicate and limit")
    func fromModelFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "templates-\(UUID().uuidString).xcdatamodel")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let contents = """
            <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
            <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
                <entity name="Employee" representedClassName="Employee" syncable="YES">
                    <attribute name="salary" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                </entity>
                <fetchRequest name="Rich" entity="Employee" predicateString="salary &gt;= $MIN" fetchLimit="10"/>
            </model>
            """
        try contents.write(to: directory.appendingPathComponent("contents"), atomically: true, encoding: .utf8)
        let model = try NSManagedObjectModel(validatingContentsOf: directory)
        let template = try #require(model.fetchRequestTemplate(forName: "Rich"))
        #expect(template.entityName == "Employee")
        #expect(template.predicate?.predicateFormat == "salary >= $MIN")
        #expect(template.fetchLimit == 10)
    }
}
