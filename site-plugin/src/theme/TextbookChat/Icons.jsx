/** Inline SVG icons (no emoji: many systems lack an emoji font). Decorative: hidden from screen readers. */
import React from 'react';

function Svg({children, size = 18}) {
  return (
    <svg width={size} height={size} viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2"
      strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false">
      {children}
    </svg>
  );
}

export const ChatIcon = () => (
  <Svg size={20}><path d="M21 12a8 8 0 0 1-11.6 7.1L4 20l1-4.6A8 8 0 1 1 21 12z" /></Svg>
);
export const CloseIcon = () => (
  <Svg><path d="M6 6l12 12M18 6L6 18" /></Svg>
);
export const ThumbUpIcon = () => (
  <Svg><path d="M7 10v11H3V10h4zm0 0l4-8a3 3 0 0 1 3 3v4h5.5a2 2 0 0 1 2 2.3l-1.4 8A2 2 0 0 1 18.1 21H7" /></Svg>
);
export const ThumbDownIcon = () => (
  <Svg><path d="M17 14V3h4v11h-4zm0 0l-4 8a3 3 0 0 1-3-3v-4H4.5a2 2 0 0 1-2-2.3l1.4-8A2 2 0 0 1 5.9 3H17" /></Svg>
);
export const WarningIcon = () => (
  <Svg><path d="M12 3l10 18H2L12 3zM12 10v5M12 18v.01" /></Svg>
);
export const WidenIcon = () => (
  <Svg><path d="M9 4H4v5M4 4l6 6M15 20h5v-5M20 20l-6-6" /></Svg>
);
export const NarrowIcon = () => (
  <Svg><path d="M10 4v6H4M10 10L4 4M14 20v-6h6M14 14l6 6" /></Svg>
);
export const CopyIcon = () => (
  <Svg size={16}><path d="M9 9h11v11H9zM5 15H4V4h11v1" /></Svg>
);
export const LinkIcon = () => (
  <Svg size={16}><path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1" /></Svg>
);
export const ExternalIcon = () => (
  <svg width="12" height="12" viewBox="0 0 24 24" fill="none" stroke="currentColor" strokeWidth="2"
    strokeLinecap="round" strokeLinejoin="round" aria-hidden="true" focusable="false" style={{marginInlineStart: '0.2em'}}>
    <path d="M14 4h6v6M20 4l-9 9M18 14v6H4V6h6" />
  </svg>
);
export const StopIcon = () => (
  <Svg size={16}><rect x="6" y="6" width="12" height="12" rx="1" /></Svg>
);
export const QuoteIcon = () => (
  <Svg size={16}><path d="M10 7H5v6h4v1a3 3 0 0 1-3 3M19 7h-5v6h4v1a3 3 0 0 1-3 3" /></Svg>
);
