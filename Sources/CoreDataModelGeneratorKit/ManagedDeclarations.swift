/// The `@NSManaged` declarations of a target, and the types its sources declare.
struct ManagedDeclarations {
    /// One `@NSManaged` property or method.
    struct Declaration: Equatable {
        enum Kind: Equatable {
            case property(name: String, type: TypeSpelling)
            /// A method and its parameters (argument label, `nil` for `_`, and type).
            case method(name: String, parameters: [Parameter])
        }

        struct Parameter: Equatable {
            let label: String?
            let type: TypeSpelling
        }

        /// The class the declaration belongs to (its body, or an extension of it).
        let owner: String
        let kind: Kind
        /// Whether it is `public` or `open` (its accessors are then public too).
        let isPublic: Bool
        let file: String
        let line: Int
    }

    private(set) var declarations: [Declaration] = []
    /// Classes, structures and enumerations the sources declare, by name.
    private(set) var types: [String: NominalKind] = [:]
    /// The superclass each class of the sources names, by class.
    private(set) var superclasses: [String: String] = [:]
    private(set) var errors: [GeneratorError] = []

    /// Reads one source file.
    mutating func read(_ source: String, file: String) {
        var reader = Reader(tokens: SourceScanner.tokens(source), file: file)
        reader.run()
        declarations += reader.declarations
        errors += reader.errors
        types.merge(reader.types) { first, _ in first }
        superclasses.merge(reader.superclasses) { first, _ in first }
    }
}

/// A type as a declaration spells it, before it is resolved against the module's types.
indirect enum TypeSpelling: Equatable, CustomStringConvertible {
    /// A name, possibly qualified (`Foundation.Date`), with generic arguments.
    case name([String], arguments: [TypeSpelling])
    case optional(TypeSpelling)
    case array(TypeSpelling)
    case dictionary(TypeSpelling, TypeSpelling)

    /// The type without its outermost optional.
    var unwrapped: TypeSpelling {
        switch self {
        case .optional(let wrapped): return wrapped
        case .name(let parts, let arguments) where parts.last == "Optional" && arguments.count == 1: return arguments[0]
        default: return self
        }
    }

    var description: String {
        switch self {
        case .name(let parts, let arguments):
            parts.joined(separator: ".")
                + (arguments.isEmpty ? "" : "<" + arguments.map(\.description).joined(separator: ", ") + ">")
        case .optional(let wrapped): "\(wrapped)?"
        case .array(let element): "[\(element)]"
        case .dictionary(let key, let value): "[\(key): \(value)]"
        }
    }
}

/// An error of the generator, reported as the compiler reports one: `file:line: error: message`.
struct GeneratorError: Error, Equatable, CustomStringConvertible {
    let file: String
    let line: Int
    let message: String

    var description: String { "\(file):\(line): error: \(message)" }
}

/// Reads tokens: follows type bodies by their braces and collects `@NSManaged` declarations.
private struct Reader {
    let tokens: [SourceScanner.Token]
    let file: String
    var position = 0
    var declarations: [ManagedDeclarations.Declaration] = []
    var types: [String: NominalKind] = [:]
    var superclasses: [String: String] = [:]
    var errors: [GeneratorError] = []

    /// The scopes the reader is in: a type body or extension (its name and whether it is nested
    /// in another type), or any other braces.
    private var scopes: [(name: String?, isType: Bool)] = []
    /// A type or extension whose `{` comes next.
    private var pending: (name: String?, isType: Bool)?

    init(tokens: [SourceScanner.Token], file: String) {
        self.tokens = tokens
        self.file = file
    }

    private var current: SourceScanner.Token? { position < tokens.count ? tokens[position] : nil }

    private func peek(_ offset: Int) -> SourceScanner.Token? {
        position + offset < tokens.count ? tokens[position + offset] : nil
    }

    private static let modifiers: Set<String> = [
        "public", "open", "internal", "fileprivate", "private", "package", "final", "override", "dynamic",
        "nonisolated", "required", "convenience", "static", "lazy", "weak", "unowned",
    ]

    mutating func run() {
        while let token = current {
            switch (token.kind, token.text) {
            case (.identifier, "class"), (.identifier, "struct"), (.identifier, "enum"), (.identifier, "actor"),
                (.identifier, "protocol"), (.identifier, "extension"):
                typeHeader(token)
            case (.punctuation, "{"):
                scopes.append(pending ?? (nil, false))
                pending = nil
                position += 1
            case (.punctuation, "}"):
                if !scopes.isEmpty { scopes.removeLast() }
                position += 1
            case (.attribute, "NSManaged"):
                managed(token)
            default:
                position += 1
            }
        }
    }

    /// `class Name`, `extension Name`, …: remembers the name for the body that follows. `class`
    /// as a modifier (`class func`, `class var`) is not a type.
    private mutating func typeHeader(_ token: SourceScanner.Token) {
        position += 1
        guard let name = current, name.kind == .identifier,
            !["func", "var", "let", "subscript", "init", "deinit", "final", "override", "public", "open", "static"]
                .contains(name.text)
        else { return }
        var qualified = name.text
        position += 1
        while current?.text == ".", let next = peek(1), next.kind == .identifier {
            qualified += "." + next.text
            position += 2
        }
        let nested = scopes.contains { $0.isType }
        if token.text != "extension", token.text != "protocol", !nested {
            let kind: NominalKind =
                token.text == "class" || token.text == "actor"
                ? .class : token.text == "struct" ? .structure : .enumeration
            if types[qualified] == nil { types[qualified] = kind }
            // The superclass: the first type of the inheritance clause (`class Novel: Book`).
            if kind == .class, current?.text == ":", let parent = peek(1), parent.kind == .identifier {
                var name = parent.text
                var offset = 2
                while peek(offset)?.text == ".", let next = peek(offset + 1), next.kind == .identifier {
                    name = next.text
                    offset += 2
                }
                superclasses[qualified] = name
            }
        }
        if nested, token.text != "extension" {
            pending = (nil, true)  // a nested type: its members are not the outer class's
        } else {
            pending = (qualified, true)
        }
    }

    /// `@NSManaged` with the modifiers and attributes around it, then `var` or `func`.
    private mutating func managed(_ attribute: SourceScanner.Token) {
        position += 1
        var isPublic = false
        var isPrivate = false
        // Modifiers and attributes may come before `@NSManaged` too: look back on its line.
        var back = position - 2
        while back >= 0, tokens[back].line == attribute.line, tokens[back].kind == .identifier,
            Self.modifiers.contains(tokens[back].text)
        {
            isPublic = isPublic || tokens[back].text == "public" || tokens[back].text == "open"
            isPrivate = isPrivate || tokens[back].text == "private" || tokens[back].text == "fileprivate"
            back -= 1
        }
        while let token = current {
            if token.kind == .attribute {
                position += 1
                if current?.text == "(" { skipBalanced() }
            } else if token.kind == .identifier, Self.modifiers.contains(token.text) {
                isPublic = isPublic || token.text == "public" || token.text == "open"
                position += 1
                // `private(set)` restricts the setter only: the property, whose name its accessors'
                // symbols carry, keeps its own access level and its symbols no file discriminator.
                let restrictsSetter = current?.text == "(" && peek(1)?.text == "set"
                if !restrictsSetter {
                    isPrivate = isPrivate || token.text == "private" || token.text == "fileprivate"
                }
                if current?.text == "(" { skipBalanced() }
            } else {
                break
            }
        }
        guard let keyword = current, keyword.kind == .identifier, keyword.text == "var" || keyword.text == "func" else {
            fail(attribute.line, "@NSManaged must come before `var` or `func`")
            return
        }
        guard let owner = scopes.last(where: { $0.isType }), scopes.last?.isType == true, let name = owner.name else {
            fail(attribute.line, "@NSManaged is supported in a class body or an extension of the class, not here")
            return
        }
        if isPrivate {
            fail(
                attribute.line,
                "@NSManaged declarations that are private or fileprivate are not supported on Linux (their symbols carry a per-file discriminator); make it internal or public"
            )
            return
        }
        position += 1
        guard let identifier = current, identifier.kind == .identifier else {
            fail(attribute.line, "expected a name after `\(keyword.text)`")
            return
        }
        position += 1
        if keyword.text == "var" {
            guard current?.text == ":" else {
                fail(attribute.line, "@NSManaged var \(identifier.text) needs a declared type (`: Type`)")
                return
            }
            position += 1
            guard let type = typeSpelling() else {
                fail(attribute.line, "cannot read the type of @NSManaged var \(identifier.text)")
                return
            }
            if current?.text == "{" || current?.text == "=" {
                fail(attribute.line, "@NSManaged var \(identifier.text) cannot have a body or an initial value")
                return
            }
            declarations.append(
                .init(
                    owner: name, kind: .property(name: identifier.text, type: type), isPublic: isPublic, file: file,
                    line: attribute.line))
        } else {
            guard current?.text == "(", let parameters = parameterList() else {
                fail(attribute.line, "cannot read the parameters of @NSManaged func \(identifier.text)")
                return
            }
            if current?.text == "->" {
                fail(
                    attribute.line,
                    "@NSManaged func \(identifier.text) returns a value; only the to-many accessors Xcode generates (returning nothing) are supported"
                )
                return
            }
            declarations.append(
                .init(
                    owner: name, kind: .method(name: identifier.text, parameters: parameters), isPublic: isPublic,
                    file: file, line: attribute.line))
        }
    }

    /// `(label name: Type, _ name: Type, name: Type)`.
    private mutating func parameterList() -> [ManagedDeclarations.Declaration.Parameter]? {
        position += 1
        var parameters: [ManagedDeclarations.Declaration.Parameter] = []
        while let token = current, token.text != ")" {
            guard token.kind == .identifier else { return nil }
            var label: String? = token.text == "_" ? nil : token.text
            position += 1
            if let second = current, second.kind == .identifier {
                position += 1
            } else if label == nil {
                return nil
            }
            if token.text == "_", current?.text != ":" { label = nil }
            guard current?.text == ":" else { return nil }
            position += 1
            guard let type = typeSpelling() else { return nil }
            parameters.append(.init(label: label, type: type))
            if current?.text == "," { position += 1 }
        }
        guard current?.text == ")" else { return nil }
        position += 1
        return parameters
    }

    /// A type: a name (qualified, with generic arguments), `[T]` or `[K: V]`, then any `?`/`!`.
    private mutating func typeSpelling() -> TypeSpelling? {
        var type: TypeSpelling
        guard let token = current else { return nil }
        if token.text == "[" {
            position += 1
            guard let element = typeSpelling() else { return nil }
            if current?.text == ":" {
                position += 1
                guard let value = typeSpelling() else { return nil }
                type = .dictionary(element, value)
            } else {
                type = .array(element)
            }
            guard current?.text == "]" else { return nil }
            position += 1
        } else if token.kind == .identifier {
            var parts = [token.text]
            position += 1
            while current?.text == ".", let next = peek(1), next.kind == .identifier {
                parts.append(next.text)
                position += 2
            }
            var arguments: [TypeSpelling] = []
            if current?.text == "<" {
                position += 1
                while let next = current, next.text != ">" {
                    guard let argument = typeSpelling() else { return nil }
                    arguments.append(argument)
                    if current?.text == "," { position += 1 }
                }
                guard current?.text == ">" else { return nil }
                position += 1
            }
            type = .name(parts, arguments: arguments)
        } else {
            return nil
        }
        while let next = current, next.text == "?" || next.text == "!" {
            type = .optional(type)
            position += 1
        }
        return type
    }

    /// Skips a parenthesized group.
    private mutating func skipBalanced() {
        var depth = 0
        while let token = current {
            if token.text == "(" { depth += 1 }
            if token.text == ")" { depth -= 1 }
            position += 1
            if depth == 0 { return }
        }
    }

    private mutating func fail(_ line: Int, _ message: String) {
        errors.append(GeneratorError(file: file, line: line, message: message))
        position += 1
    }
}
