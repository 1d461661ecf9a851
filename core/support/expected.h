#pragma once
/// @file
/// Expected<T>: a value or the diagnostics that explain why there is none.

#include <optional>
#include <utility>

#include "core/support/diagnostic.h"

namespace tessera::support {

template <typename T>
class Expected {
public:
    Expected(T value) : m_value(std::move(value)) {}  // NOLINT(google-explicit-constructor)
    Expected(DiagnosticList diags) : m_diags(std::move(diags)) {}  // NOLINT(google-explicit-constructor)
    Expected(T value, DiagnosticList warnings) : m_value(std::move(value)), m_diags(std::move(warnings)) {}

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }
    T& value() { return *m_value; }
    const T& value() const { return *m_value; }
    T* operator->() { return &*m_value; }
    const T* operator->() const { return &*m_value; }
    T& operator*() { return *m_value; }
    const T& operator*() const { return *m_value; }
    /// Errors when !ok(); warnings and notes when ok().
    const DiagnosticList& diagnostics() const { return m_diags; }
    DiagnosticList& diagnostics() { return m_diags; }

private:
    std::optional<T> m_value;
    DiagnosticList m_diags;
};

}  // namespace tessera::support
