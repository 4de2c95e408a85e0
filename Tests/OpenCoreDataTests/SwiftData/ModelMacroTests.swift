import SwiftDataMacros
import SwiftDiagnostics
import SwiftParser
import SwiftSyntax
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacros
import Testing

/// The `@Model` macro's own rules, checked on its expansion of source text (the compiler's
/// expansion, run here without compiling the result). Apple's `Model()` documentation: "converts a
/// Swift class into a stored model"; stored properties persist, `@Transient` ones do not; the
/// macro applies to classes only. Computed and `static` properties are not stored properties of a
/// model.
@Suite("SwiftData: the @Model macro's expansion")
struct ModelMacroTests {
    static func expand(_ source: String) -> (members: [String], attributed: [String], diagnostics: [String]) {
        let file = Parser.parse(source: source)
        let context = BasicMacroExpansionContext(sourceFiles: [
            file: .init(moduleName: "App", fullFilePath: "App.swift")
        ])
        guard let declaration = file.statements.first?.item.as(DeclSyntax.self),
            let group = declaration.asProtocol(DeclGroupSyntax.self),
            let attribute = group.attributes.first?.as(AttributeSyntax.self)
        else { return ([], [], ["no declaration"]) }
        let members =
            (try? ModelMacro.expansion(of: attribute, providingMembersOf: group, conformingTo: [], in: context)) ?? []
        let attributed = group.memberBlock.members.compactMap { member -> String? in
            let attributes =
                (try? ModelMacro.expansion(
                    of: attribute, attachedTo: group, providingAttributesFor: member.decl, in: context)) ?? []
            guard !attributes.isEmpty, let variable = member.decl.as(VariableDeclSyntax.self) else { return nil }
            return variable.bindings.first?.pattern.trimmedDescription
        }
        return (
            members.map(\.trimmedDescription), attributed, context.diagnostics.map(\.message)
        )
    }

    @Test func onlyStoredVariablesArePersisted() {
        let expansion = Self.expand(
            """
            @Model final class Trip {
                var name: String
                var nights: Int = 1
                @Transient var views = 0
                static var count = 0
                var title: String { name.uppercased() }
                init(name: String) { self.name = name }
            }
            """)
        #expect(expansion.diagnostics.isEmpty)
        #expect(expansion.attributed == ["name", "nights"])
        let metadata = expansion.members.first { $0.contains("schemaMetadata") } ?? ""
        #expect(metadata.contains(#"name: "name", keypath: \Trip.name"#))
        #expect(metadata.contains(#"name: "nights", keypath: \Trip.nights"#))
        #expect(!metadata.contains("views") && !metadata.contains("title") && !metadata.contains("count"))
        #expect(expansion.members.contains { $0.contains("init(backingData: any SwiftData.BackingData<Trip>)") })
    }

    @Test func attributeOptionsReachTheMetadata() {
        let expansion = Self.expand(
            """
            @Model final class Tag {
                @Attribute(.unique, originalName: "title") var name: String
                init(name: String) { self.name = name }
            }
            """)
        let metadata = expansion.members.first { $0.contains("schemaMetadata") } ?? ""
        #expect(metadata.contains(#"metadata: SwiftData.Schema.Attribute(.unique, originalName: "title")"#))
    }

    @Test func aStructIsRefusedWithADiagnostic() {
        let expansion = Self.expand("@Model struct Point { var x: Int }")
        #expect(expansion.diagnostics == ["@Model can only be applied to a class"])
        #expect(expansion.members.isEmpty)
    }
}
