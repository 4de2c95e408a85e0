import Synchronization

/// Per-key validation. Apple finds a `validate<Key>:error:` method by name through the
/// Objective-C runtime and calls it from `validateValue(_:forKey:)` after the model's constraints.
/// Linux has no such lookup, so there are two documented equivalents: override
/// `validateValue(_:forKey:)` and switch on the key, or register the method once:
///
/// ```swift
/// final class Employee: NSManagedObject {
///     func validateName(_ value: inout Any?) throws { … }
/// }
/// Employee.registerValidation(forKey: "name", Employee.validateName)
/// ```
///
/// Related documentation: Core Data Programming Guide, "Object Validation" ("Property-Level
/// Validation"); NSManagedObject reference, `validateValue(_:forKey:)`.
extension NSManagedObject {
    /// Registers `method` as the validation of `key` for objects of this class and its subclasses:
    /// `validateValue(_:forKey:)` calls it after the model's constraints pass, as Apple calls
    /// `validate<Key>:error:`. It may replace the value (coercion) or throw a validation error.
    /// Validations registered for a class's superclasses run too, superclass first.
    public class func registerValidation(
        forKey key: String, _ method: @escaping (Self) -> (inout Any?) throws -> Void
    ) {
        KeyValidations.shared.add(
            key: key, depth: classDepth(self),
            validation: { object, value in
                guard let object = object as? Self else { return }
                try method(object)(&value)
            })
    }

    /// Runs the validations registered for `key` that apply to this object.
    func runRegisteredValidations(_ value: inout Any?, forKey key: String) throws {
        for validation in KeyValidations.shared.validations(forKey: key) {
            try validation(self, &value)
        }
    }

    /// How many classes lie between `type` and `NSManagedObject`, to run superclass validations first.
    private static func classDepth(_ type: AnyClass) -> Int {
        var depth = 0
        var current: AnyClass? = type
        while let type = current, ObjectIdentifier(type) != ObjectIdentifier(NSManagedObject.self) {
            depth += 1
            current = _getSuperclass(type)
        }
        return depth
    }
}

/// The registered per-key validations (thread-safe: registration may happen on any thread).
final class KeyValidations: @unchecked Sendable {
    typealias Validation = (NSManagedObject, inout Any?) throws -> Void

    static let shared = KeyValidations()

    private let lock = NSLock()
    private var byKey: [String: [(depth: Int, validation: Validation)]] = [:]
    /// Whether any validation was ever registered: most programs register none, and a save
    /// asks once per property of every object it validates.
    private let anyRegistered = Atomic<Bool>(false)

    func add(key: String, depth: Int, validation: @escaping Validation) {
        lock.lock()
        defer { lock.unlock() }
        var list = byKey[key, default: []]
        let index = list.firstIndex { $0.depth > depth } ?? list.count
        list.insert((depth, validation), at: index)
        byKey[key] = list
        anyRegistered.store(true, ordering: .releasing)
    }

    func validations(forKey key: String) -> [Validation] {
        guard anyRegistered.load(ordering: .acquiring) else { return [] }
        lock.lock()
        defer { lock.unlock() }
        return byKey[key]?.map(\.validation) ?? []
    }
}
