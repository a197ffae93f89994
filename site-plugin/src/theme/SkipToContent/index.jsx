/**
 * Docusaurus's "Skip to main content" link, then one that opens the chat: a keyboard reader
 * reaches the chat with the second Tab of a page instead of after every link of the page
 * (the chat button comes last). Both stay off screen until focused; mouse readers never see them.
 */
import React, {useEffect, useState} from 'react';
import SkipToContentInit from '@theme-init/SkipToContent';
import {usePluginData} from '@docusaurus/useGlobalData';
import {isolate} from '../../client/direction.mjs';
import {fill, requestOpen, shortcutLabel} from '../../client/labels.mjs';
import styles from '../TextbookChat/styles.module.css';

const PLUGIN_NAME = 'docusaurus-plugin-textbook-chat';

export default function SkipToContent(props) {
  const {labels} = usePluginData(PLUGIN_NAME);
  const [keys, setKeys] = useState('Ctrl+/');
  useEffect(() => {
    setKeys(shortcutLabel(window.navigator.platform || window.navigator.userAgentData?.platform || ''));
  }, []);
  return (
    <>
      <SkipToContentInit {...props} />
      <a
        className={styles.skipToChat}
        href="#textbook-chat-input"
        data-skip-to-chat=""
        onClick={(event) => {
          event.preventDefault();
          requestOpen();
        }}>
        {fill(labels.skipToChat, {keys: isolate(keys)})}
      </a>
    </>
  );
}
