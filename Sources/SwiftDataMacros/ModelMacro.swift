import SwiftCompilerPlugin
import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// The compiler plugin of the `SwiftData` module's macros.
@main
struct SwiftDataMacrosPlugin: CompilerPlugin {
    let providingMacros: [Macro.Type] = [
        ModelMacro.self, PersistedPropertyMacro.self, TransientMacro.self, PropertyOptionsMacro.self,
        ModelActorMacro.self, KeyPathListMacro.self,
    ]
}

/// A stored property of a `@Model` class that is persisted: a `var` with a type annotation, no
/// accessors, not `static`, not marked `@Transient`.
struct PersistedProperty {
    let name: String
    let type: TypeSyntax
    /// The property's options as a `Schema.Attribute` or `Schema.Relationship` made of the
    /// arguments of its `@Attribute(...)` or `@Relationship(...)`; `nil` without either.
    let options: String?

    /// The persisted property `declaration` declares, if it is one.
    init?(_ declaration: some DeclSyntaxProtocol) {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            variable.bindingSpecifier.tokenKind == .keyword(.var),
            !variable.modifiers.contains(where: {
                [.keyword(.static), .keyword(.class), .keyword(.lazy)].contains($0.name.tokenKind)
            }),
            !variable.attributes.contains(where: { Self.isNamed($0, "Transient") }),
            variable.bindings.count == 1, let binding = variable.bindings.first,
            binding.accessorBlock == nil,
            let identifier = binding.pattern.as(IdentifierPatternSyntax.self),
            let type = binding.typeAnnotation?.type
        else { return nil }
        name = identifier.identifier.trimmedDescription
        self.type = type.trimmed
        options =
            variable.attributes.lazy.compactMap { element -> String? in
                guard case .attribute(let attribute) = element,
                    let kind = ["Attribute", "Relationship"].first(where: { Self.isNamed(element, $0) })
                else { return nil }
                return "SwiftData.Schema.\(kind)(\(attribute.arguments?.trimmedDescription ?? ""))"
            }.first
    }

    /// The binding of a `var` that would be persisted but has no type annotation.
    static func untypedBinding(_ declaration: some DeclSyntaxProtocol) -> PatternBindingSyntax? {
        guard let variable = declaration.as(VariableDeclSyntax.self),
            variable.bindingSpecifier.tokenKind == .keyword(.var),
            !variable.modifiers.contains(where: {
                [.keyword(.static), .keyword(.class), .keyword(.lazy)].contains($0.name.tokenKind)
            }),
            !variable.attributes.contains(where: { isNamed($0, "Transient") }),
            variable.bindings.count == 1, let binding = variable.bindings.first,
            binding.accessorBlock == nil, binding.pattern.is(IdentifierPatternSyntax.self),
            binding.typeAnnotation == nil
        else { return nil }
        return binding
    }

    static func isNamed(_ attribute: AttributeListSyntax.Element, _ name: String) -> Bool {
        guard case .attribute(let attribute) = attribute else { return false }
        let written = attribute.attributeName.trimmedDescription
        return written == name || written == "SwiftData." + name
    }
}

/// `@Model`: makes a class a persistent model, as Apple's macro does. Each stored `var` becomes a
/// computed property over the model's backing data (``PersistedPropertyMacro``), observed through
/// an `ObservationRegistrar`; the class gets `persistentBackingData`, `schemaMetadata` (the
/// properties, for the `Schema`), `init(backingData:)`, and conformances to `PersistentModel` and
/// `Observable`.
public struct ModelMacro: MemberMacro, MemberAttributeMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDeclaration = declaration.as(ClassDeclSyntax.self) else {
            context.diagnose(
                Diagnostic(node: node, message: ModelDiagnostic("@Model can only be applied to a class")))
            return []
        }
        let typeName = classDeclaration.name.trimmedDescription
        // A stored property without a written type cannot become the computed property that keeps
        // its value in the backing data: say so, rather than leave it silently unsaved.
        for member in declaration.memberBlock.members {
            guard let binding = PersistedProperty.untypedBinding(member.decl) else { continue }
            context.diagnose(
                Diagnostic(
                    node: binding,
                    message: ModelDiagnostic(
                        "@Model saves '\(binding.pattern.trimmedDescription)' only with its type written out (var \(binding.pattern.trimmedDescription): Type = …), or mark it @Transient"
                    )))
        }
        let properties = declaration.memberBlock.members.compactMap { PersistedProperty($0.decl) }
        let metadata = properties.map { property in
            let metadata = property.options ?? "nil"
            return
                "SwiftData.Schema.PropertyMetadata(name: \"\(property.name)\", keypath: \\\(typeName).\(property.name), defaultValue: nil, metadata: \(metadata))"
        }
        let access = classDeclaration.modifiers.contains { $0.name.tokenKind == .keyword(.public) } ? "public " : ""
        let required = classDeclaration.modifiers.contains { $0.name.tokenKind == .keyword(.final) } ? "" : "required "
        let initializations = properties.map { "_\($0.name) = _SwiftDataNoType()" }.joined(separator: "\n")
        return [
            "private var _$backingData: any SwiftData.BackingData<\(raw: typeName)> = \(raw: typeName).createBackingData()",
            """
            \(raw: access)var persistentBackingData: any SwiftData.BackingData<\(raw: typeName)> {
                get { _$backingData }
                set { _$backingData = newValue }
            }
            """,
            """
            \(raw: access)static var schemaMetadata: [SwiftData.Schema.PropertyMetadata] {
                [\(raw: metadata.joined(separator: ",\n"))]
            }
            """,
            """
            \(raw: access)\(raw: required)init(backingData: any SwiftData.BackingData<\(raw: typeName)>) {
                \(raw: initializations)
                self.persistentBackingData = backingData
            }
            """,
            "private let _$observationRegistrar = Observation.ObservationRegistrar()",
            "struct _SwiftDataNoType {}",
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        // On anything but a class the member macro has already said so; the accessors it would
        // need are not there.
        guard declaration.is(ClassDeclSyntax.self), PersistedProperty(member) != nil else { return [] }
        return ["@_PersistedProperty"]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ClassDeclSyntax.self) else { return [] }
        return [
            try ExtensionDeclSyntax("extension \(type.trimmed): SwiftData.PersistentModel {}"),
            try ExtensionDeclSyntax("extension \(type.trimmed): Observation.Observable {}"),
        ]
    }
}

/// `@_PersistedProperty`, which `@Model` puts on each persisted property: the property's value
/// lives in the model's backing data. An init accessor stores the initial value there, so the
/// class's own initializers assign the property as they did before the macro.
public struct PersistedPropertyMacro: AccessorMacro, PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let property = PersistedProperty(declaration) else { return [] }
        let name = property.name
        return [
            """
            @storageRestrictions(accesses: _$backingData, initializes: _\(raw: name))
            init(initialValue) {
                _$backingData.setValue(forKey: \\.\(raw: name), to: initialValue)
                _\(raw: name) = _SwiftDataNoType()
            }
            """,
            """
            get {
                _$observationRegistrar.access(self, keyPath: \\.\(raw: name))
                return self.getValue(forKey: \\.\(raw: name))
            }
            """,
            """
            set {
                _$observationRegistrar.withMutation(of: self, keyPath: \\.\(raw: name)) {
                    self.setValue(forKey: \\.\(raw: name), to: newValue)
                }
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let property = PersistedProperty(declaration) else { return [] }
        return ["private var _\(raw: property.name): _SwiftDataNoType"]
    }
}

/// `@Attribute(...)` and `@Relationship(...)`: the property's options. They expand to nothing;
/// `@Model` reads their arguments into the property's `Schema.Attribute` or `Schema.Relationship`.
public struct PropertyOptionsMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}

/// `@Transient`: the property is not persisted; `@Model` leaves it a stored property.
public struct TransientMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}

struct ModelDiagnostic: DiagnosticMessage {
    let message: String
    init(_ message: String) { self.message = message }
    var diagnosticID: MessageID { MessageID(domain: "SwiftData", id: message) }
    var severity: DiagnosticSeverity { .error }
}

/// `@ModelActor`: makes an actor one whose code runs on its own model context's executor. The
/// actor gets `modelContainer`, `modelExecutor` (a `DefaultSerialModelExecutor` over a new context
/// of the container), `init(modelContainer:)`, and a conformance to `ModelActor`, which makes the
/// executor the actor's.
public struct ModelActorMacro: MemberMacro, ExtensionMacro {
    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let actor = declaration.as(ActorDeclSyntax.self) else {
            context.diagnose(
                Diagnostic(node: node, message: ModelDiagnostic("@ModelActor can only be applied to an actor")))
            return []
        }
        let access = actor.modifiers.contains { $0.name.tokenKind == .keyword(.public) } ? "public " : ""
        return [
            "\(raw: access)nonisolated let modelExecutor: any SwiftData.ModelExecutor",
            "\(raw: access)nonisolated let modelContainer: SwiftData.ModelContainer",
            """
            \(raw: access)init(modelContainer: SwiftData.ModelContainer) {
                let modelContext = SwiftData.ModelContext(modelContainer)
                self.modelExecutor = SwiftData.DefaultSerialModelExecutor(modelContext: modelContext)
                self.modelContainer = modelContainer
            }
            """,
        ]
    }

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingExtensionsOf type: some TypeSyntaxProtocol,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [ExtensionDeclSyntax] {
        guard declaration.is(ActorDeclSyntax.self) else { return [] }
        return [try ExtensionDeclSyntax("extension \(type.trimmed): SwiftData.ModelActor {}")]
    }
}

/// `#Unique<Model>([\.a], [\.b, \.c])` and `#Index<Model>([\.a], [\.b, \.c])` in a model class:
/// a static property listing the key paths, which `Schema` reads into the entity's uniqueness
/// constraints or fetch indexes.
public struct KeyPathListMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        let property = node.macroName.trimmedDescription == "Unique" ? "_$uniquenessConstraints" : "_$indexes"
        // The model is the generic argument, or else the class the macro is written in.
        let enclosing = context.lexicalContext.lazy.compactMap { $0.as(ClassDeclSyntax.self) }.first
        guard
            let model = node.genericArgumentClause?.arguments.first?.argument.trimmedDescription
                ?? enclosing?.name.trimmedDescription
        else {
            context.diagnose(
                Diagnostic(
                    node: node,
                    message: ModelDiagnostic(
                        "#\(node.macroName.trimmedDescription) is written in a model class's body, or names it: #\(node.macroName.trimmedDescription)<Model>(...)"
                    )))
            return []
        }
        let lists = node.arguments.map { $0.expression.trimmedDescription }.joined(separator: ", ")
        if property == "_$indexes" {
            // Both forms (lists of key paths, or `.binary`/`.rtree` types) are what
            // `Schema.Index`'s initializers take.
            return [
                """
                static var _$indexes: [[AnyKeyPath]] {
                    SwiftData.Schema.Index<\(raw: model)>(\(raw: lists)).keyPaths(rTree: false)
                }
                """,
                """
                static var _$rTreeIndexes: [[AnyKeyPath]] {
                    SwiftData.Schema.Index<\(raw: model)>(\(raw: lists)).keyPaths(rTree: true)
                }
                """,
            ]
        }
        return [
            """
            static var \(raw: property): [[AnyKeyPath]] {
                let lists: [[PartialKeyPath<\(raw: model)>]] = [\(raw: lists)]
                return lists
            }
            """
        ]
    }
}
