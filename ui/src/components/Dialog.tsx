// A modal dialog (the native <dialog>, opened with showModal: focus kept inside, Escape closes) named by its title,
// with a Close button, and ConfirmDialog: a question with a confirm and a Cancel button, for actions that change or
// delete data (rollback, kill, restart, bulk delete...). Action buttons go in a `dialog-foot` footer.
import { useEffect, useId, useRef, type ReactNode } from 'react';

export function Dialog({ open, title, onClose, children }: { open: boolean; title: string; onClose(): void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    // Escape is turned into onClose: whether the dialog shows stays the caller's state.
    <dialog ref={ref} aria-labelledby={titleId} className="dialog"
      onCancel={(e) => { e.preventDefault(); onClose(); }}>
      {open && (
        <>
          <header className="dialog-head">
            <h2 id={titleId}>{title}</h2>
            <button type="button" className="link" aria-label="Close" onClick={onClose}>×</button>
          </header>
          {children}
        </>
      )}
    </dialog>
  );
}

export function ConfirmDialog({ open, title, confirmLabel, onConfirm, onCancel, busy, children }: {
  open: boolean; title: string; confirmLabel: string; onConfirm(): void; onCancel(): void; busy?: boolean; children: ReactNode;
}) {
  return (
    <Dialog open={open} title={title} onClose={onCancel}>
      <div className="dialog-body">{children}</div>
      <footer className="dialog-foot">
        <button type="button" onClick={onCancel} disabled={busy}>Cancel</button>
        <button type="button" className="primary" onClick={onConfirm} disabled={busy}>{confirmLabel}</button>
      </footer>
    </Dialog>
  );
}
