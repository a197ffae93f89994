/** Wraps the site's Root so the chat widget is on every page and survives SPA navigation. */
import React from 'react';
import RootInit from '@theme-init/Root';
import TextbookChat from '@theme/TextbookChat';

export default function Root({children}) {
  return (
    <RootInit>
      {children}
      <TextbookChat />
    </RootInit>
  );
}
