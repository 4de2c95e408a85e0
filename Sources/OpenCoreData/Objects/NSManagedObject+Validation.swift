/// Validation: the model's constraints first, then the object's own `validateFor…` overrides,
/// with errors gathered Apple-style.
///
/// Related documentation: Core Data Programming Guide, "Object Validation"; NSManagedObject
/// reference, "Supporting Validation".
extension NSManagedObject {
    /// Validates `value` for the property `key` against the model: mandatory values, minimum and
    func modelValidateValue(_ value: inout Any?, forKey key: String) throws {
        guard let slot = layout.slot(named: key), !layout.quickChecks[slot].accepts(value) else { return }
        if let error = CoreDataError.combining(constraintErrors(slot: slot, value: value)) { throw error }
    }

    /// Validates the object before it is first saved: every property, through ``validateValue(_:forKey:)``.
    func modelValidateForInsert() throws {
        try validateAllProperties()
    }

    /// Validates the object before its changes are saved: every property, through ``validateValue(_:forKey:)``.
    func modelValidateForUpdate() throws {
        try validateAllProperties()
    }

    /// Validates that the object can be deleted: no relationship with the deny rule still has
    func modelValidateForDelete() throws {
        var errors: [Error] = []
        for slot in layout.relationshipSlots where layout.relationship(at: slot).deleteRule == .denyDeleteRule {
            let remaining = toManyOrOne(slot: slot).filter { !$0.isDeletedFlag && !$0.isDiscardedInsert }
            if !remaining.isEmpty {
                let name = layout.properties[slot].name
                errors.append(
                    CoreDataError.validation(
                        NSValidationRelationshipDeniedDeleteError,
                        "\(name) has objects and its delete rule is Deny.", object: self, key: name,
                        value: publicValue(slot: slot)))
            }
        }
        if let error = CoreDataError.combining(errors) { throw error }
    }

    private func validateAllProperties() throws {
        realize()
        var errors: [Error] = []
        for slot in 0..<layout.count where layout.kinds[slot] != .fetched {
            var value = publicValue(slot: slot)
            do {
                try validateValue(&value, forKey: layout.names[slot])
            } catch {
                errors.append(error)
            }
        }
        if let error = CoreDataError.combining(errors) { throw error }
    }

    /// The model's constraints on one property, checked against `value`.
    func constraintErrors(slot: Int, value: Any?) -> [Error] {
        let property = layout.properties[slot]
        let name = property.name
        func failure(_ code: Int, _ text: String, predicate: NSPredicate? = nil) -> Error {
            CoreDataError.validation(code, text, object: self, key: name, value: value, predicate: predicate)
        }
        switch layout.kinds[slot] {
        case .fetched:
            return []
        case .toMany:
            let relationship = layout.relationship(at: slot)
            let count = DynamicValue.unwrap(value).flatMap(DynamicValue.elements)?.count ?? 0
            // Apple's cardinality rule: fewer members than `minCount` fail, except that an
            // optional relationship may be empty; a non-optional one with `minCount` 0 may be too.
            if count < relationship.minCount && (count > 0 || !relationship.isOptional) {
                return [failure(NSValidationRelationshipLacksMinimumCountError, "\(name) has too few objects.")]
            }
            if relationship.maxCount > 0, count > relationship.maxCount {
                return [failure(NSValidationRelationshipExceedsMaximumCountError, "\(name) has too many objects.")]
            }
            return []
        case .toOne:
            if DynamicValue.unwrap(value) == nil, !property.isOptional {
                return [failure(NSValidationMissingMandatoryPropertyError, "\(name) is a required value.")]
            }
            return []
        case .attribute:
            guard let present = DynamicValue.unwrap(value) else {
                return property.isOptional
                    ? [] : [failure(NSValidationMissingMandatoryPropertyError, "\(name) is a required value.")]
            }
            var errors: [Error] = []
            if let attribute = property as? NSAttributeDescription {
                if let error = Self.typeError(attribute, present, failure) { return [error] }
                errors += boundErrors(attribute, present, failure)
            }
            for (index, predicate) in property.validationPredicates.enumerated()
            where !predicate.evaluate(with: present) {
                let warning = index < property.validationWarnings.count ? property.validationWarnings[index] : nil
                // A numeric warning (compiled models carry one) is the error code to report.
                let code =
                    (warning as? String).flatMap { Int($0) }
                    ?? warning.flatMap { DynamicValue.number($0)?.exactInt }.map(Int.init)
                if let code {
                    errors.append(failure(code, "\(name) failed validation.", predicate: predicate))
                } else {
                    let text = (warning as? String) ?? "\(name) failed validation."
                    errors.append(failure(NSManagedObjectValidationError, text, predicate: predicate))
                }
            }
            return errors
        }
    }

    /// A value of the wrong type for its attribute — a string for an Integer 16, a date for a
    /// string — or an integer the attribute's width cannot hold. Apple refuses such a value as it is
    /// set ("Unacceptable type of value for attribute"); here the save refuses it with a validation
    /// error rather than store something else (`NSManagedObjectValidationError`, 1550; an integer
    /// out of range is `NSValidationNumberTooLargeError` / `TooSmallError`, 1610 / 1620).
    static func typeError(
        _ attribute: NSAttributeDescription, _ value: Any, _ failure: (Int, String, NSPredicate?) -> Error
    ) -> Error? {
        let name = attribute.name
        func wrong(_ expected: String) -> Error {
            failure(NSManagedObjectValidationError, "\(name) needs \(expected), not a \(type(of: value)).", nil)
        }
        switch attribute.attributeType {
        case .integer16AttributeType, .integer32AttributeType, .integer64AttributeType:
            guard let number = DynamicValue.number(value) else { return wrong("an integer") }
            let bits =
                attribute.attributeType == .integer16AttributeType
                ? 16 : attribute.attributeType == .integer32AttributeType ? 32 : 64
            let high = bits == 64 ? Double(Int64.max) : Double((1 << (bits - 1)) - 1)
            let low = bits == 64 ? Double(Int64.min) : -Double(1 << (bits - 1))
            let double = number.exactInt.map(Double.init) ?? number.doubleValue
            if let exact = number.exactInt, bits < 64 {
                if exact > Int64(high) {
                    return failure(NSValidationNumberTooLargeError, "\(name) does not fit in \(bits) bits.", nil)
                }
                if exact < Int64(low) {
                    return failure(NSValidationNumberTooSmallError, "\(name) does not fit in \(bits) bits.", nil)
                }
            } else if number.exactInt == nil {
                if double.isNaN { return wrong("an integer") }
                if double > high {
                    return failure(NSValidationNumberTooLargeError, "\(name) does not fit in \(bits) bits.", nil)
                }
                if double < low {
                    return failure(NSValidationNumberTooSmallError, "\(name) does not fit in \(bits) bits.", nil)
                }
            }
            return nil
        case .doubleAttributeType, .floatAttributeType, .decimalAttributeType, .booleanAttributeType:
            return DynamicValue.number(value) == nil ? wrong("a number") : nil
        case .stringAttributeType:
            return DynamicValue.string(value) == nil ? wrong("a string") : nil
        case .dateAttributeType:
            return (value as? Date) == nil ? wrong("a date") : nil
        case .binaryDataAttributeType:
            return (value as? Data) == nil && (value as? [UInt8]) == nil ? wrong("data") : nil
        case .UUIDAttributeType:
            return (value as? UUID) == nil ? wrong("a UUID") : nil
        case .URIAttributeType:
            return (value as? URL) == nil && DynamicValue.string(value) == nil ? wrong("a URL") : nil
        default:
            return nil
        }
    }

    /// Minimum, maximum and pattern from a model file (`minValueString`, `maxValueString`,
    /// `regularExpressionString`): numbers by value, strings by length.
    private func boundErrors(
        _ attribute: NSAttributeDescription, _ value: Any, _ failure: (Int, String, NSPredicate?) -> Error
    ) -> [Error] {
        var errors: [Error] = []
        let name = attribute.name
        if let string = value as? String {
            let length = string.count
            if let minimum = attribute.minimumValueText.flatMap(Int.init), length < minimum {
                errors.append(failure(NSValidationStringTooShortError, "\(name) is too short.", nil))
            }
            if let maximum = attribute.maximumValueText.flatMap(Int.init), length > maximum {
                errors.append(failure(NSValidationStringTooLongError, "\(name) is too long.", nil))
            }
            if let pattern = attribute.regularExpressionText,
                string.range(of: "^(?:\(pattern))$", options: .regularExpression) == nil
            {
                errors.append(
                    failure(NSValidationStringPatternMatchingError, "\(name) does not match its pattern.", nil))
            }
        } else if let number = DynamicValue.number(value) {
            if let minimum = attribute.minimumValueText.flatMap(Double.init), number.doubleValue < minimum {
                errors.append(failure(NSValidationNumberTooSmallError, "\(name) is too small.", nil))
            }
            if let maximum = attribute.maximumValueText.flatMap(Double.init), number.doubleValue > maximum {
                errors.append(failure(NSValidationNumberTooLargeError, "\(name) is too large.", nil))
            }
        }
        return errors
    }
}
