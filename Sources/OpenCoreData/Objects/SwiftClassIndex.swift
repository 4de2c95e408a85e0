#if !canImport(Darwin)
    import SwiftShims

    /// Every non-generic Swift class of the loaded images, by name: what lets an entity whose
    /// `managedObjectClassName` is a bare `Employee` (as Xcode writes it) find its class before
    /// any code has used the class. On Apple platforms the Objective-C class table answers
    /// `NSClassFromString("Employee")`; Swift on Linux has no such table, but its runtime keeps
    /// the type descriptors of every image (what `_typeByName` searches), and this reads their
    /// names once.
    ///
    /// The descriptors read are the stable parts of Swift's metadata ABI (docs/ABI/TypeMetadata.rst
    /// in the Swift repository): a type record is a relative pointer to a context descriptor (low
    /// bits: direct or indirect); a descriptor starts with its flags (kind in the low five bits,
    /// "generic" in bit 7), a relative (possibly indirect) pointer to its parent context, and —
    /// for modules and nominal types — a relative pointer to its name. Only modules, classes,
    /// structs and enums are followed; a class nested in an extension, a function or a private
    /// scope has no name code can look up and is left out.
    struct SwiftClassIndex: Sendable {
        /// A class the index knows: its dotted name (`MyApp.Employee`, `MyApp.Library.Book`) and
        /// the mangled name the runtime looks it up by.
        struct Entry: Sendable {
            let qualifiedName: String
            let mangledName: String
        }

        /// Entries by bare class name (the last component).
        private let byBareName: [String: [Entry]]

        /// The index of the images loaded when it is first asked for.
        static let loaded = SwiftClassIndex()

        private init() {
            var entries: [Entry] = []
            withUnsafeMutablePointer(to: &entries) { pointer in
                enumerateMetadataSections(
                    { sections, context in
                        let entries = context.assumingMemoryBound(to: [Entry].self)
                        SwiftClassIndex.readTypeRecords(sections.pointee.swift5_type_metadata, into: &entries.pointee)
                        return true
                    }, UnsafeMutableRawPointer(pointer))
            }
            byBareName = Dictionary(grouping: entries) { entry in
                entry.qualifiedName.split(separator: ".").last.map(String.init) ?? entry.qualifiedName
            }
        }

        /// The classes named `name`: a dotted name matches exactly (`MyApp.Employee`); a bare
        /// name matches every class whose last component it is.
        func classes(named name: String) -> [Any.Type] {
            let bare = name.split(separator: ".").last.map(String.init) ?? name
            return (byBareName[bare] ?? []).compactMap { entry in
                guard !name.contains(".") || entry.qualifiedName == name else { return nil }
                return _typeByName(entry.mangledName)
            }
        }

        private static func readTypeRecords(_ range: MetadataSectionRange, into entries: inout [Entry]) {
            guard let start = UnsafeRawPointer(bitPattern: range.start) else { return }
            var offset = 0
            while offset + 4 <= range.length {
                let record = start + offset
                offset += 4
                let raw = record.loadUnaligned(as: Int32.self)
                let target = record + Int(raw & ~3)
                let descriptor: UnsafeRawPointer?
                switch raw & 3 {
                case 0: descriptor = target  // direct
                case 1: descriptor = target.load(as: UnsafeRawPointer?.self)  // indirect
                default: descriptor = nil  // Objective-C class references
                }
                guard let descriptor, case let flags = descriptor.load(as: UInt32.self),
                    flags & kindMask == classKind, flags & genericFlag == 0,
                    let names = path(of: descriptor, depth: 0)
                else { continue }
                entries.append(Entry(qualifiedName: names.dotted, mangledName: names.mangled))
            }
        }

        private static let kindMask: UInt32 = 0x1F
        private static let moduleKind: UInt32 = 0
        private static let classKind: UInt32 = 16
        private static let structKind: UInt32 = 17
        private static let enumKind: UInt32 = 18
        private static let genericFlag: UInt32 = 0x80

        /// The dotted and mangled names of a module or of a nominal type nested in modules and
        /// nominal types only; nil for anything else (and for names mangling would need Punycode
        /// for — a dotted name still finds those at top level through `_typeByName`).
        private static func path(of descriptor: UnsafeRawPointer, depth: Int) -> (dotted: String, mangled: String)? {
            let kind = descriptor.load(as: UInt32.self) & kindMask
            guard depth < 16, kind == moduleKind || (classKind...enumKind).contains(kind),
                let namePointer = relativePointer(at: descriptor + 8)
            else { return nil }
            let name = String(cString: namePointer.assumingMemoryBound(to: CChar.self))
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 < 0x80 }),
                name.utf8.first.map({ !(0x30...0x39).contains($0) }) ?? false
            else { return nil }
            let identifier = "\(name.utf8.count)\(name)"
            if kind == moduleKind { return (name, identifier) }
            guard let parent = parentPointer(of: descriptor), let outer = path(of: parent, depth: depth + 1) else {
                return nil
            }
            let suffix = kind == classKind ? "C" : kind == structKind ? "V" : "O"
            return (outer.dotted + "." + name, outer.mangled + identifier + suffix)
        }

        /// The target of the 32-bit relative pointer at `address`, nil when it is null.
        private static func relativePointer(at address: UnsafeRawPointer) -> UnsafeRawPointer? {
            let offset = address.loadUnaligned(as: Int32.self)
            return offset == 0 ? nil : address + Int(offset)
        }

        /// A context descriptor's parent: a relative pointer at offset 4 that, with its low bit set,
        /// points at a pointer to the parent instead.
        private static func parentPointer(of descriptor: UnsafeRawPointer) -> UnsafeRawPointer? {
            let field = descriptor + 4
            let offset = field.loadUnaligned(as: Int32.self)
            if offset == 0 { return nil }
            if offset & 1 == 0 { return field + Int(offset) }
            return (field + Int(offset & ~1)).load(as: UnsafeRawPointer?.self)
        }
    }

    /// The Swift runtime's walk over the metadata sections of every loaded image (Linux, Windows;
    /// the Swift repository's own tests call it this way).
    @_silgen_name("swift_enumerateAllMetadataSections")
    private func enumerateMetadataSections(
        _ body: @convention(c) (UnsafePointer<MetadataSections>, UnsafeMutableRawPointer) -> Bool,
        _ context: UnsafeMutableRawPointer)
#endif
