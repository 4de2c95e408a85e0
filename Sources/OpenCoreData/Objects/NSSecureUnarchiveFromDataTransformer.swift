/// Unarchives `Data` securely, in Apple's direction: ``transformedValue(_:)`` takes archived `Data`
/// and gives the object (only ``allowedTopLevelClasses`` are decoded: strings, numbers, dates,
/// data, URLs, UUIDs, arrays, dictionaries, sets); ``reverseTransformedValue(_:)`` archives an
/// object with `NSKeyedArchiver`. Core Data uses it — and subclasses of it — in reverse: it
/// archives a value with `reverseTransformedValue` when saving and unarchives with
/// `transformedValue` when reading.
///
/// Related documentation: NSSecureUnarchiveFromDataTransformer ("A value transformer that
/// converts data to and from classes that support secure coding").
open class NSSecureUnarchiveFromDataTransformer: ValueTransformer, @unchecked Sendable {
    /// The classes unarchiving allows.
    open class var allowedTopLevelClasses: [AnyClass] {
        [
            NSArray.self, NSDictionary.self, NSSet.self, NSString.self, NSNumber.self, NSDate.self, NSData.self,
            NSURL.self, NSUUID.self, NSNull.self,
        ]
    }

    /// Unarchives `value` (archived `Data`) securely; `nil` when it is not an archive of the
    /// allowed classes, or is malformed. Foundation's own classes are decoded by this library's
    /// checked reader (Foundation's unarchiver traps on many malformed archives on Linux); an
    /// archive holding other allowed classes is checked, then given to `NSKeyedUnarchiver`.
    override open func transformedValue(_ value: Any?) -> Any? {
        guard let data = value as? Data else { return nil }
        return KeyedArchive.unarchive(data, allowedClasses: Self.allowedTopLevelClasses)
    }

    /// Archives `value` with `NSKeyedArchiver`, requiring secure coding; `nil` when it cannot be archived.
    override open func reverseTransformedValue(_ value: Any?) -> Any? {
        guard let value = DynamicValue.unwrap(value) else { return nil }
        return try? NSKeyedArchiver.archivedData(withRootObject: value, requiringSecureCoding: true)
    }
}
