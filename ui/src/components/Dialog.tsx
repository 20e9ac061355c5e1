// A modal dialog (the native <dialog>: focus kept inside, Escape closes) named by its title, and ConfirmDialog, a
// question with a confirm and a Cancel button, for actions that change things (rollback, kill, delete...).
import { useEffect, useId, useRef, type ReactNode } from 'react';

export function Dialog({ open, title, onClose, children, className }: {
  open: boolean; title: string; onClose(): void; children: ReactNode; className?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (open && !d.open) d.showModal();
    if (!open && d.open) d.close();
  }, [open]);
  return (
    <dialog ref={ref} aria-labelledby={titleId} className={`dialog ${className ?? ''}`}
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

export function ConfirmDialog({ open, title, confirmLabel, onConfirm, onClose, busy, children }: {
  open: boolean; title: string; confirmLabel: string; onConfirm(): void; onClose(): void; busy?: boolean; children: ReactNode;
}) {
  return (
    <Dialog open={open} title={title} onClose={onClose}>
      <div className="dialog-body">{children}</div>
      <footer className="dialog-foot">
        <button type="button" onClick={onClose} disabled={busy}>Cancel</button>
        <button type="button" className="primary" onClick={onConfirm} disabled={busy}>{confirmLabel}</button>
      </footer>
    </Dialog>
  );
}
