/// Swift's mangled names for the accessors of `@NSManaged` declarations, following the Swift ABI's
/// mangling grammar (`docs/ABI/Mangling.rst` in the Swift repository): run-length identifiers with
/// word substitutions, back-references to modules and nominal types already mangled, known-type
/// abbreviations, and the entity forms of a property's getter and setter and of a method.
///
/// On Linux the compiler leaves an `@NSManaged` declaration's accessors undefined; a function
/// given that exact name with `@_silgen_name` supplies them. A name computed wrongly is a link
/// error, never a wrong call: the example target and the tests compile and run every shape.
struct SwiftMangler {
    /// The mangling so far, after the `$s` prefix.
    private(set) var text = ""
    /// Words of the identifiers mangled so far: their start in `text` and their length.
    private var words: [(start: Int, length: Int)] = []
    /// Modules, nominal types and bound generic types mangled so far, by the substitution index
    /// a back-reference names them with. Every identifier takes an index too (the demangler
    /// numbers them all), so `nextIndex` counts those as well.
    private var substitutions: [String: Int] = [:]
    private var nextIndex = 0
    /// The back-references written since the last character that was not one (consecutive ones
    /// are written as one `A…` run), and where in `text` that run starts.
    private var run: [Int] = []
    private var runStart: Int?

    /// The most words an identifier can refer back to (one letter each).
    private static let maximumWords = 26

    // MARK: Entities

    /// The getter (`vg`) or setter (`vs`) of property `name` of type `type` in class `owner`.
    static func accessor(
        module: String, owner: String, property: String, type: SwiftType, setter: Bool
    ) throws(ManglingError) -> String {
        var mangler = SwiftMangler()
        mangler.nominal(module: module, name: owner, kind: .class)
        mangler.identifier(property)
        try mangler.type(type, module: module)
        mangler.append(setter ? "vs" : "vg")
        return "$s" + mangler.text
    }

    /// The method `name(labels…)` of class `owner` taking `parameters` and returning nothing.
    static func method(
        module: String, owner: String, name: String, parameters: [(label: String?, type: SwiftType)]
    ) throws(ManglingError) -> String {
        var mangler = SwiftMangler()
        mangler.nominal(module: module, name: owner, kind: .class)
        mangler.identifier(name)
        // The argument labels: `y` when every parameter is unlabeled, else `_` or the label each.
        if !parameters.isEmpty {
            if parameters.allSatisfy({ $0.label == nil }) {
                mangler.append("y")
            } else {
                for parameter in parameters {
                    if let label = parameter.label { mangler.identifier(label) } else { mangler.append("_") }
                }
            }
        }
        // The function type: the result (the empty tuple), then the parameters.
        mangler.append("y")
        switch parameters.count {
        case 0:
            mangler.append("y")
        case 1 where parameters[0].label == nil:
            try mangler.type(parameters[0].type, module: module)
        default:
            // A list (a labeled single parameter too): each type, `_` after the first, then `t`.
            for (index, parameter) in parameters.enumerated() {
                try mangler.type(parameter.type, module: module)
                if index == 0 { mangler.append("_") }
            }
            mangler.append("t")
        }
        mangler.append("F")
        return "$s" + mangler.text
    }

    // MARK: Types

    /// A type as it is spelled in a declaration. A nominal type and a bound generic type (an
    /// optional, array, set or dictionary) each take a substitution index once mangled, and are
    /// referred back to when they come again.
    mutating func type(_ type: SwiftType, module: String) throws(ManglingError) {
        if case .named(let name) = type, let known = Self.knownTypes[name] {
            append(known)
            return
        }
        let key = try Self.key(type, module: module)
        if let index = substitutions[key] {
            backReference(index)
            return
        }
        switch type {
        case .optional(let wrapped):
            try self.type(wrapped, module: module)
            append("Sg")
        case .array(let element):
            append("Say")
            try self.type(element, module: module)
            append("G")
        case .set(let element):
            append("Shy")
            try self.type(element, module: module)
            append("G")
        case .dictionary(let key, let value):
            append("SDy")
            try self.type(key, module: module)
            try self.type(value, module: module)
            append("G")
        case .named(let name):
            guard let (home, kind) = Self.libraryTypes[name] else { throw ManglingError.unknownType(name) }
            nominal(module: home, name: name, kind: kind)
            return
        case .user(let name, let kind):
            nominal(module: module, name: name, kind: kind)
            return
        }
        remember(key)
    }

    /// The identity of a type for back-references.
    private static func key(_ type: SwiftType, module: String) throws(ManglingError) -> String {
        switch type {
        case .optional(let wrapped): return "optional " + (try key(wrapped, module: module))
        case .array(let element): return "array " + (try key(element, module: module))
        case .set(let element): return "set " + (try key(element, module: module))
        case .dictionary(let key, let value):
            return "dictionary " + (try Self.key(key, module: module)) + " " + (try Self.key(value, module: module))
        case .named(let name):
            guard let (home, _) = libraryTypes[name] else {
                if knownTypes[name] != nil { return "known " + name }
                throw ManglingError.unknownType(name)
            }
            return "type \(home).\(name)"
        case .user(let name, _): return "type \(module).\(name)"
        }
    }

    /// Standard-library types with a two-letter abbreviation.
    private static let knownTypes: [String: String] = [
        "Int": "Si", "UInt": "Su", "String": "SS", "Bool": "Sb", "Double": "Sd", "Float": "Sf",
    ]

    /// Types of the standard library and Foundation on Linux, by the module that defines them:
    /// Foundation's value types live in `FoundationEssentials` there (on Apple platforms, in
    /// `Foundation`).
    static let libraryTypes: [String: (module: String, kind: NominalKind)] = [
        "Int8": ("Swift", .structure), "Int16": ("Swift", .structure), "Int32": ("Swift", .structure),
        "Int64": ("Swift", .structure), "UInt8": ("Swift", .structure), "UInt16": ("Swift", .structure),
        "UInt32": ("Swift", .structure), "UInt64": ("Swift", .structure),
        "Date": ("FoundationEssentials", .structure), "Data": ("FoundationEssentials", .structure),
        "UUID": ("FoundationEssentials", .structure), "URL": ("FoundationEssentials", .structure),
        "Decimal": ("FoundationEssentials", .structure),
        "NSSet": ("Foundation", .class), "NSOrderedSet": ("Foundation", .class),
        "NSDecimalNumber": ("Foundation", .class), "NSNumber": ("Foundation", .class),
        "NSObject": ("Foundation", .class), "NSIndexSet": ("Foundation", .class),
        "NSArray": ("Foundation", .class), "NSDictionary": ("Foundation", .class),
        "NSString": ("Foundation", .class), "NSData": ("Foundation", .class), "NSDate": ("Foundation", .class),
        "NSURL": ("Foundation", .class), "NSUUID": ("Foundation", .class),
        "NSManagedObject": ("OpenCoreData", .class), "NSManagedObjectID": ("OpenCoreData", .class),
    ]

    // MARK: Contexts and identifiers

    /// A module: `s` for the standard library, else a back-reference or its name.
    mutating func module(_ name: String) {
        if name == "Swift" {
            append("s")
            return
        }
        if let index = substitutions["module " + name] {
            backReference(index)
            return
        }
        // A module is its name: the identifier's substitution index is the module's.
        substitutions["module " + name] = nextIndex
        identifier(name)
    }

    /// A nominal type of `module`: a back-reference, or the module, the name and the kind.
    mutating func nominal(module: String, name: String, kind: NominalKind) {
        let key = "type \(module).\(name)"
        if let index = substitutions[key] {
            backReference(index)
            return
        }
        self.module(module)
        identifier(name)
        append(String(kind.rawValue))
        remember(key)
    }

    /// An ASCII identifier, run-length encoded, with words mangled before written as references.
    mutating func identifier(_ identifier: String) {
        let characters = Array(identifier.utf8)
        let wordsBefore = words.count
        // Find the words: substrings of letters and digits, split at `_` and where an uppercase
        // letter follows a character that is not one; a word seen before becomes a reference.
        var references: [(start: Int, word: Int)] = []
        var newWords: [(start: Int, length: Int)] = []
        var wordStart: Int?
        for position in 0...characters.count {
            let character = position < characters.count ? characters[position] : 0
            if let start = wordStart, Self.endsWord(character, after: characters[position - 1]) {
                let word = characters[start..<position]
                if let index = self.index(of: word, in: characters, newWords: newWords, wordsBefore: wordsBefore) {
                    references.append((start, index))
                } else if word.count >= 2, words.count + newWords.count < Self.maximumWords {
                    newWords.append((start, word.count))
                }
                wordStart = nil
            }
            if wordStart == nil, Self.startsWord(character) { wordStart = position }
        }
        flushRun()
        nextIndex += 1
        if references.isEmpty {
            text += String(characters.count)
            let base = text.utf8.count
            words += newWords.map { (base + $0.start, $0.length) }
            text += identifier
            return
        }
        text += "0"
        var position = 0
        var pendingNew = newWords[...]
        for (offset, reference) in references.enumerated() {
            if position < reference.start {
                literal(characters[position..<reference.start], from: position, newWords: &pendingNew)
                position = reference.start
            }
            let length = words[reference.word].length
            position += length
            let letter = UInt8(reference.word)
            if offset < references.count - 1 {
                text.append(Character(Unicode.Scalar(UInt8(ascii: "a") + letter)))
            } else {
                text.append(Character(Unicode.Scalar(UInt8(ascii: "A") + letter)))
                if position == characters.count { text += "0" }
            }
        }
        if position < characters.count {
            literal(characters[position...], from: position, newWords: &pendingNew)
        }
    }

    /// Writes a literal part of an identifier, recording where its new words land in `text`.
    private mutating func literal(
        _ part: ArraySlice<UInt8>, from start: Int, newWords: inout ArraySlice<(start: Int, length: Int)>
    ) {
        text += String(part.count)
        let base = text.utf8.count - start
        while let next = newWords.first, next.start < start + part.count {
            if next.start >= start { words.append((base + next.start, next.length)) }
            newWords = newWords.dropFirst()
        }
        text += String(decoding: part, as: UTF8.self)
    }

    /// The index of `word` among the words mangled before, or among this identifier's new words.
    private func index(
        of word: ArraySlice<UInt8>, in identifier: [UInt8], newWords: [(start: Int, length: Int)], wordsBefore: Int
    ) -> Int? {
        let mangled = Array(text.utf8)
        for (index, existing) in words.prefix(wordsBefore).enumerated()
        where mangled[existing.start..<existing.start + existing.length].elementsEqual(word) {
            return index
        }
        for (offset, existing) in newWords.enumerated()
        where identifier[existing.start..<existing.start + existing.length].elementsEqual(word) {
            return wordsBefore + offset
        }
        return nil
    }

    private static func startsWord(_ character: UInt8) -> Bool {
        !(character >= UInt8(ascii: "0") && character <= UInt8(ascii: "9")) && character != UInt8(ascii: "_")
            && character != 0
    }

    private static func endsWord(_ character: UInt8, after previous: UInt8) -> Bool {
        if character == UInt8(ascii: "_") || character == 0 { return true }
        let isUpper = { (c: UInt8) in c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z") }
        return !isUpper(previous) && isUpper(character)
    }

    // MARK: Back-references

    private mutating func remember(_ key: String) {
        substitutions[key] = nextIndex
        nextIndex += 1
    }

    /// A back-reference to substitution `index`; consecutive ones share one `A`, all but the last
    /// lowercase, a repeated one prefixed by its count, as the grammar abbreviates them.
    private mutating func backReference(_ index: Int) {
        guard index < 26 else {
            // Past the letters: `A` and the index past 26 (`_` for 0, else one less and `_`).
            flushRun()
            let past = index - 26
            text += "A" + (past == 0 ? "_" : "\(past - 1)_")
            return
        }
        if let start = runStart {
            text = String(decoding: Array(text.utf8).prefix(start), as: UTF8.self)
        } else {
            runStart = text.utf8.count
            run = []
        }
        run.append(index)
        text += renderRun()
    }

    private func renderRun() -> String {
        var groups: [(index: Int, count: Int)] = []
        for index in run {
            if let previous = groups.last, previous.index == index {
                groups[groups.count - 1].count += 1
            } else {
                groups.append((index, 1))
            }
        }
        var rendered = "A"
        for (offset, group) in groups.enumerated() {
            if group.count > 1 { rendered += String(group.count) }
            let first = offset == groups.count - 1 ? UInt8(ascii: "A") : UInt8(ascii: "a")
            rendered.append(Character(Unicode.Scalar(first + UInt8(group.index))))
        }
        return rendered
    }

    /// Ends a run of back-references: what follows is not one.
    private mutating func flushRun() {
        runStart = nil
        run = []
    }

    private mutating func append(_ operator: String) {
        flushRun()
        text += `operator`
    }
}

/// The kind of a nominal type, as its mangling ends.
enum NominalKind: Character {
    case `class` = "C"
    case structure = "V"
    case enumeration = "O"
}

/// A type in an `@NSManaged` declaration.
indirect enum SwiftType: Equatable {
    /// A standard-library or Foundation type, or one the generator does not know.
    case named(String)
    /// A type declared in the module being generated for.
    case user(String, NominalKind)
    case optional(SwiftType)
    case array(SwiftType)
    case set(SwiftType)
    case dictionary(SwiftType, SwiftType)
}

/// Why a declaration's accessors cannot be named.
enum ManglingError: Error, Equatable {
    /// A type that is neither the standard library's, Foundation's, Core Data's nor declared in
    /// the module's own sources.
    case unknownType(String)
}
