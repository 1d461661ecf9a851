#pragma once
/// @file
/// A small dialog editing a copy of a GPU profile for what-if planning (issue 6): SMs, L1 and
/// shared memory per SM (KiB), warp size and L2 (KiB). The result is a custom profile named
/// "<base>-custom" unless the user renames it. Invalid combinations (target::validateGpuProfile:
/// shared memory above L1, ...) keep OK disabled and say why.
///
/// Thread rules: UI thread only.

#include <QDialog>

#include "core/target/gpu_profile.h"

class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QSpinBox;

namespace tessera::views {

class GpuProfileDialog : public QDialog {
    Q_OBJECT
public:
    explicit GpuProfileDialog(const target::GpuProfile& base, QWidget* parent = nullptr);

    /// The edited profile (a copy of the base with the fields changed).
    target::GpuProfile profile() const;
    QSpinBox* smsBox() const { return m_sms; }
    QSpinBox* l1Box() const { return m_l1; }
    QSpinBox* sharedBox() const { return m_shared; }
    QSpinBox* warpBox() const { return m_warp; }
    QSpinBox* l2Box() const { return m_l2; }
    QLineEdit* nameEdit() const { return m_name; }

private:
    void validate();

    target::GpuProfile m_base;
    QLineEdit* m_name;
    QSpinBox* m_sms;
    QSpinBox* m_l1;
    QSpinBox* m_shared;
    QSpinBox* m_warp;
    QSpinBox* m_l2;
    QLabel* m_error;
    QDialogButtonBox* m_buttons;
};

}  // namespace tessera::views
