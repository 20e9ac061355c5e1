// A modal dialog (the native <dialog>, opened with showModal: focus kept inside, Escape closes) with a title that
// names it, and ConfirmDialog: a question with a confirm and a cancel button, for actions that change or delete data.
import { useEffect, useId, useRef, type ReactNode } from 'react';

export function Dialog({ title, open, onClose, children }: { title: string; open: boolean; onClose(): void; children: ReactNode }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} className="dialog" aria-labelledby={titleId} onClose={onClose} onCancel={onClose}>
      {open && (
        <>
          <h2 id={titleId}>{title}</h2>
          {children}
        </>
      )}
    </dialog>
  );
}

export function ConfirmDialog({ title, open, confirmLabel, busy, onConfirm, onCancel, children }: {
  title: string; open: boolean; confirmLabel: string; busy?: boolean; onConfirm(): void; onCancel(): void; children: ReactNode;
}) {
  return (
    <Dialog title={title} open={open} onClose={onCancel}>
      <div className="dialog-body">{children}</div>
      <div className="dialog-actions">
        <button type="button" onClick={onCancel}>Cancel</button>
        <button type="button" className="primary" disabled={busy} onClick={onConfirm}>{confirmLabel}</button>
      </div>
    </Dialog>
  );
}
