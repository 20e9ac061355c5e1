// Two texts compared side by side (line numbers, removed lines marked on the left, added ones on the right), as a
// table named by `label`.
import { useMemo } from 'react';
import { sideBySide } from './side-by-side';

export function SideBySideDiff({ left, right, label, leftTitle, rightTitle }: {
  left: string; right: string; label: string; leftTitle: string; rightTitle: string;
}) {
  const rows = useMemo(() => sideBySide(left, right), [left, right]);
  const changes = rows.filter((r) => r.kind !== 'same').length;
  return (
    <div className="diff-wrap">
      <p className="muted" role="status">{changes === 0 ? 'The two revisions have the same source' : `${changes} changed line${changes > 1 ? 's' : ''}`}</p>
      <table className="diff" aria-label={label}>
        <colgroup><col className="diff-num-col" /><col /><col className="diff-num-col" /><col /></colgroup>
        <thead>
          <tr><th colSpan={2} scope="colgroup">{leftTitle}</th><th colSpan={2} scope="colgroup">{rightTitle}</th></tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={i} className={`diff-${row.kind}`}>
              <td className="diff-num">{row.left?.line ?? ''}</td>
              <td className={row.left && row.kind !== 'same' ? 'diff-text diff-del' : 'diff-text'}>{row.left?.text ?? ''}</td>
              <td className="diff-num">{row.right?.line ?? ''}</td>
              <td className={row.right && row.kind !== 'same' ? 'diff-text diff-ins' : 'diff-text'}>{row.right?.text ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
