/// Read access to an `NSKeyedArchiver` property list: the format of compiled models (`.mom`) and
/// of the model cached in a SQLite store (`Z_MODELCACHE`).
///
/// The archive is untrusted input (a store file can be hostile), so every lookup is checked and a
/// malformed archive is a thrown ``ModelProblem``, never a trap.
struct KeyedArchive {
    let objects: [Any]
    let root: Int

    /// - Parameter allowingSets: Whether the property list may hold sets (see
    ///   ``PropertyListReader/propertyList(from:allowingSets:)``).
    init(data: Data, allowingSets: Bool = true) throws {
        let plist: Any
        do {
            plist = try PropertyListReader.propertyList(from: data, allowingSets: allowingSets)
        } catch {
            throw ModelProblem(message: "is not a property list (\(error))")
        }
        guard let archive = plist as? [String: Any], archive["$archiver"] as? String == "NSKeyedArchiver",
            let objects = archive["$objects"] as? [Any], let top = archive["$top"] as? [String: Any]
        else { throw ModelProblem(message: "is not an NSKeyedArchiver archive") }
        self.objects = objects
        guard let root = Self.uid(top["root"]), root > 0, root < objects.count else {
            throw ModelProblem(message: "has no root object")
        }
        self.root = root
    }

    /// The object index a UID reference holds. Binary property lists decode UIDs to Foundation's
    /// private `_NSKeyedArchiverUID`, whose index is only reachable by reflection; XML ones to
    /// `["CF$UID": n]`.
    static func uid(_ value: Any?) -> Int? {
        guard let value else { return nil }
        if let dictionary = value as? [String: Any], dictionary.count == 1 { return dictionary["CF$UID"] as? Int }
        guard DynamicValue.isObject(value), String(describing: type(of: value)).contains("KeyedArchiverUID") else {
            return nil
        }
        for child in Mirror(reflecting: value).children where child.label == "value" {
            if let index = child.value as? UInt32 { return Int(index) }
            if let index = child.value as? Int { return index }
            if let index = child.value as? UInt64 { return Int(exactly: index) }
        }
        return nil
    }

    /// The object a reference points to; `nil` for `$null` and for references out of range.
    func object(_ reference: Any?) -> Any? {
        guard let index = Self.uid(reference), index > 0, index < objects.count else { return nil }
        return objects[index]
    }

    func dictionary(_ reference: Any?) -> [String: Any]? {
        object(reference) as? [String: Any]
    }

    /// The class name an archived object was written as (`$class` → `$classname`).
    func className(_ object: [String: Any]) -> String? {
        dictionary(object["$class"])?["$classname"] as? String
    }

    func string(_ reference: Any?) -> String? {
        let value = object(reference)
        if let string = value as? String { return string }
        if let dictionary = value as? [String: Any] {
            if let string = dictionary["NS.string"] as? String { return string }
            if let bytes = dictionary["NS.bytes"] as? Data { return String(data: bytes, encoding: .utf8) }
        }
        return nil
    }

    /// The element references of an archived array or set.
    func elements(_ reference: Any?) -> [Any] {
        dictionary(reference)?["NS.objects"] as? [Any] ?? []
    }

    /// The key/value references of an archived dictionary, keys decoded as strings.
    func pairs(_ reference: Any?) -> [(key: String, value: Any)] {
        // NSKnownKeysDictionary1 (store model caches): keys in its search mapping, values apart.
        if let dictionary = dictionary(reference), let mapping = self.dictionary(dictionary["searchMapping"]) {
            let keys = elements(mapping["keys"])
            let values = elements(dictionary["values"])
            guard keys.count == values.count else { return [] }
            return zip(keys, values).compactMap { key, value in string(key).map { ($0, value) } }
        }
        guard let dictionary = dictionary(reference), let keys = dictionary["NS.keys"] as? [Any],
            let values = dictionary["NS.objects"] as? [Any], keys.count == values.count
        else { return [] }
        return zip(keys, values).compactMap { key, value in string(key).map { ($0, value) } }
    }

    /// The most elements the decoded values of one archive may have in all, counting each
    /// appearance of a shared object: an archive can refer to one array from both elements of
    /// another, 32 levels deep, and describe 2³² elements in a few hundred bytes.
    static let maximumValueElements = 100_000

    private final class Budget {
        var remaining = KeyedArchive.maximumValueElements
    }

    private let budget = Budget()

    /// A plain value (number, string, date, data, UUID, URL, collection) decoded generically.
    ///
    /// - Throws: ``ModelProblem`` when the archive's values would have more than
    ///   ``maximumValueElements`` elements in all.
    func value(_ reference: Any?) throws -> Any? { try value(reference, depth: 0) }

    private func value(_ reference: Any?, depth: Int) throws -> Any? {
        budget.remaining -= 1
        guard budget.remaining >= 0 else {
            throw ModelProblem(
                message: "has a value of more than \(Self.maximumValueElements) elements (through shared references)")
        }
        guard depth < 32, let value = object(reference) else { return nil }
        if value is String || value is Data || value is Bool || DynamicValue.number(value) != nil { return value }
        guard let dictionary = value as? [String: Any] else { return nil }
        switch className(dictionary) {
        case "NSString", "NSMutableString": return string(reference)
        case "NSDate": return (dictionary["NS.time"] as? Double).map { Date(timeIntervalSinceReferenceDate: $0) }
        case "NSUUID": return (dictionary["NS.uuidbytes"] as? Data).flatMap(Self.uuid)
        case "NSURL": return string(dictionary["NS.relative"]).flatMap { URL(string: $0) }
        case "NSData", "NSMutableData": return dictionary["NS.data"] as? Data
        case "NSArray", "NSMutableArray", "NSSet", "NSMutableSet", "NSOrderedSet":
            var result: [Any] = []
            for element in elements(reference) {
                if let item = try self.value(element, depth: depth + 1) { result.append(item) }
            }
            return result
        case "NSDictionary", "NSMutableDictionary":
            var result: [String: Any] = [:]
            for (key, item) in pairs(reference) { result[key] = try self.value(item, depth: depth + 1) }
            return result
        case "NSDecimalNumber":
            return (dictionary["NS.decimal"] as? String).flatMap { Decimal(string: $0) }
        default: return nil
        }
    }

    static func uuid(_ bytes: Data) -> UUID? {
        guard bytes.count == 16 else { return nil }
        let b = Array(bytes)
        return UUID(
            uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15])
        )
    }
}

extension KeyedArchive {
    /// `data` read as an archive Foundation's `NSKeyedUnarchiver` can be given without trapping,
    /// or `nil`. Linux's unarchiver traps on archives a damaged or hostile store can hold (a store
    /// fuzz target found a transformable value whose `$class` named a string instead of a class
    /// description; flipped bytes found a property-list set, which crashes Foundation's
    /// property-list reader, and a class description naming `NSObject`, which traps its
    /// unarchiver). Checked here with this type's own reader: the archive's shape, no
    /// property-list set, every reference in range, every `$class` a description with a
    /// `$classname` and `$classes` naming one of `allowedClasses` or a subclass of one, no object
    /// containing itself and none nested deeper than ``maximumNesting``. The objects' own fields
    /// are checked by ``unarchive(_:allowedClasses:)``, which decodes with this.
    static func checkedForUnarchiver(_ data: Data, allowedClasses: [AnyClass]) -> KeyedArchive? {
        guard let archive = try? KeyedArchive(data: data, allowingSets: false),
            archive.objects.first as? String == "$null"
        else { return nil }
        let allowedNames = Set(allowedClasses.map { NSStringFromClass($0) })
        func isAllowed(_ name: String) -> Bool {
            if allowedNames.contains(name) { return true }
            // Only names of the shape of a class (`Module.Name`) reach Foundation's class lookup.
            let parts = name.split(separator: ".", omittingEmptySubsequences: false)
            guard !parts.isEmpty, parts.count <= 2,
                parts.allSatisfy({ part in
                    guard let first = part.first, first.isASCII, first.isLetter || first == "_" else { return false }
                    return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_") }
                }),
                let found = NSClassFromString(name) as? NSObject.Type
            else { return false }
            return allowedClasses.contains { found.isSubclass(of: $0) }
        }
        let objects = archive.objects
        // Every reference anywhere in range, and every `$class` a class description.
        func references(in value: Any, depth: Int) -> [Int]? {
            if depth > 64 { return nil }
            if let index = uid(value) {
                return index >= 0 && index < objects.count ? [index] : nil
            }
            if let array = value as? [Any] {
                var found: [Int] = []
                for element in array {
                    guard let inner = references(in: element, depth: depth + 1) else { return nil }
                    found += inner
                }
                return found
            }
            if let dictionary = value as? [String: Any] {
                var found: [Int] = []
                for (key, element) in dictionary where key != "$class" {
                    guard let inner = references(in: element, depth: depth + 1) else { return nil }
                    found += inner
                }
                return found
            }
            return []
        }
        func isClassDescription(_ index: Int) -> Bool {
            guard let description = objects[index] as? [String: Any],
                let name = description["$classname"] as? String, isAllowed(name),
                let classes = description["$classes"] as? [Any], !classes.isEmpty, classes.allSatisfy({ $0 is String })
            else { return false }
            return true
        }
        var children: [[Int]] = []
        children.reserveCapacity(objects.count)
        for object in objects {
            if let dictionary = object as? [String: Any], dictionary["$classname"] == nil {
                guard let classReference = dictionary["$class"], let index = uid(classReference), index > 0,
                    index < objects.count, isClassDescription(index)
                else { return nil }
            }
            guard let inner = references(in: object, depth: 0) else { return nil }
            children.append(inner)
        }
        // No object contains itself (the unarchiver would recurse forever) and none nests deeper
        // than the limit. Depth-first from every object, with an explicit stack so that a hostile
        // chain of objects cannot overflow ours; an object's height is one more than its tallest child's.
        var state = [UInt8](repeating: 0, count: objects.count)  // 0 new, 1 on the path, 2 done
        var height = [Int](repeating: 0, count: objects.count)
        for start in objects.indices where state[start] == 0 {
            var stack: [(index: Int, next: Int)] = [(start, 0)]
            state[start] = 1
            while let top = stack.last {
                let children = children[top.index]
                if top.next == children.count {
                    state[top.index] = 2
                    height[top.index] = 1 + (children.map { height[$0] }.max() ?? 0)
                    guard height[top.index] <= maximumNesting else { return nil }
                    stack.removeLast()
                    continue
                }
                stack[stack.count - 1].next += 1
                let child = children[top.next]
                if state[child] == 1 { return nil }
                if state[child] == 0 {
                    state[child] = 1
                    stack.append((child, 0))
                }
            }
        }
        return archive
    }
}
